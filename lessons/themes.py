"""The colour theme a page is drawn in: the system's (prefers-color-scheme), light or dark.

The server writes the choice into the page (html[data-theme] and the media of the dark
stylesheets), so the first paint is already right without an inline script the CSP would
refuse. A learner keeps the choice on their row; a visitor without one keeps it in a cookie,
since choosing a theme alone must not create a learner (lessons/learners.py).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from lessons.learners import NOBODY_KEY, SESSION_KEY, learner_for_request
from lessons.models import Learner

THEMES = ("system", "light", "dark")
COOKIE_NAME = "theme"
COOKIE_MAX_AGE = 365 * 24 * 3600
# The media the dark stylesheets load with: the system decides, or always, or never (print is
# always light).
DARK_MEDIA = {
    "system": "screen and (prefers-color-scheme: dark)",
    "dark": "screen",
    "light": "not all",
}


def _clean(value: str | None) -> str:
    return value if value in THEMES else ""


def theme_for_request(request: HttpRequest) -> str:
    """The learner's saved theme, else the cookie's, else the system's. A newcomer's page
    view reads only the cookie: it costs no query and makes no row."""
    user = getattr(request, "user", None)
    signed_in = user is not None and user.is_authenticated
    session = getattr(request, "session", None)
    if signed_in or (session is not None and session.get(SESSION_KEY)):
        learner = learner_for_request(request, create=False)
        if learner.key != NOBODY_KEY and _clean(learner.theme):
            return learner.theme
    return _clean(request.COOKIES.get(COOKIE_NAME)) or "system"


def theme_save(*, request: HttpRequest, response: HttpResponse, theme: str) -> None:
    """On the learner's row when the visitor has one (it follows them to other devices once
    signed in), and in the cookie always (it outlives a signed-out session)."""
    learner = learner_for_request(request, create=False)
    if learner.key != NOBODY_KEY:
        Learner.objects.filter(pk=learner.pk).update(theme=theme)
    response.set_cookie(
        COOKIE_NAME,
        theme,
        max_age=COOKIE_MAX_AGE,
        samesite="Lax",
        httponly=True,
        secure=request.is_secure(),
    )


def theme_context(request: HttpRequest) -> dict[str, str]:
    """Template context processor: every page draws its theme switch and dark stylesheets."""
    theme = theme_for_request(request)
    return {"theme": theme, "theme_dark_media": DARK_MEDIA[theme], "theme_media": DARK_MEDIA}

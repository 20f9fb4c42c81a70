"""A limit on password guessing: after SIGNIN_MAX_FAILURES failed sign-ins for one username
from one client address within SIGNIN_WINDOW_SECONDS, that pair is refused (HTTP 429, with a
form error saying how long to wait) until the window passes. Both sign-in pages use it:
/accounts/login/ and /admin/login/.

Counted in the app's Redis, so every web process shares the count. If that Redis is down the
limiter lets sign-ins through and logs it: people can still sign in, and the lab says Redis is
down anyway.
"""

from __future__ import annotations

import hashlib
import logging
from functools import wraps

import redis
from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import signals
from django.contrib.auth.forms import AuthenticationForm
from django.dispatch import receiver

from teachlab.lab.store import app_redis

log = logging.getLogger(__name__)
THROTTLED = "throttled"


def _key(*, address: str, username: str) -> str:
    # Hashed: a username is user input of any length and any characters.
    who = hashlib.sha256(f"{address}\0{username.strip().lower()}".encode()).hexdigest()[:32]
    return f"signin:fail:{who}"


def _address(request) -> str:
    return (request.META.get("REMOTE_ADDR") if request is not None else "") or "unknown"


def signin_wait(*, request, username: str) -> int:
    """Seconds until this address may try this username again; 0 when it may now."""
    key = _key(address=_address(request), username=username)
    try:
        pipe = app_redis().pipeline()
        pipe.get(key)
        pipe.ttl(key)
        failures, ttl = pipe.execute()
    except redis.RedisError as exc:
        log.warning("sign-in throttle not checked, Redis does not answer: %s", exc)
        return 0
    if int(failures or 0) < settings.SIGNIN_MAX_FAILURES:
        return 0
    return max(1, int(ttl))


def signin_failure_record(*, request, username: str) -> None:
    key = _key(address=_address(request), username=username)
    try:
        if app_redis().incr(key) == 1:  # the window starts at the first failure
            app_redis().expire(key, settings.SIGNIN_WINDOW_SECONDS)
    except redis.RedisError as exc:
        log.warning("sign-in failure not counted, Redis does not answer: %s", exc)


def signin_failures_clear(*, request, username: str) -> None:
    try:
        app_redis().delete(_key(address=_address(request), username=username))
    except redis.RedisError:
        pass


@receiver(signals.user_login_failed)
def _count_failure(sender, credentials, request=None, **kwargs) -> None:
    signin_failure_record(request=request, username=str(credentials.get("username", "")))


@receiver(signals.user_logged_in)
def _clear_failures(sender, request, user, **kwargs) -> None:
    if request is not None:
        signin_failures_clear(request=request, username=user.get_username())


class ThrottleMixin:
    """Refuse before the password is even checked while the pair is over its limit."""

    def clean(self):
        username = self.data.get("username", "") if self.data else ""
        wait = signin_wait(request=self.request, username=str(username))
        if wait:
            minutes = max(1, round(wait / 60))
            raise forms.ValidationError(
                f"Too many failed sign-ins for this username from your address. Try again in "
                f"about {minutes} minute{'s' if minutes != 1 else ''}.",
                code=THROTTLED,
            )
        return super().clean()


class ThrottledAuthenticationForm(ThrottleMixin, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(ThrottleMixin, AdminAuthenticationForm):
    pass


def throttled_status(view):
    """Answer 429 instead of 200 when the sign-in form was refused by the throttle."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        form = (getattr(response, "context_data", None) or {}).get("form")
        if form is not None and form.is_bound and form.has_error("__all__", code=THROTTLED):
            response.status_code = 429
        return response

    return wrapped

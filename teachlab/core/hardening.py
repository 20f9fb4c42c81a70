"""Production mode's rules, kept out of settings.py so tests can call them: which secret keys
are strong enough, which HTTPS protections an environment turned off, and the warning for it.

settings.py calls these at import, so a server in production mode refuses to start rather
than run with the key from the repository.
"""

from __future__ import annotations

import sys

from django.core.exceptions import ImproperlyConfigured

# The local default key starts like Django's own throwaway keys, so `check --deploy` flags it
# even where DEBUG is off and this module's refusal was bypassed.
LOCAL_SECRET_KEY = "django-insecure-local-only-not-secret-change-me-in-production-0123456789"  # noqa: S105
SECRET_KEY_MIN_LENGTH = 50  # the limits Django's security.W009 check uses
SECRET_KEY_MIN_UNIQUE = 5

# Each HTTPS protection production mode turns on, and the variable that turns it off.
PLAIN_HTTP_TOGGLES = {
    "TEACHLAB_SECURE_COOKIES": "session and CSRF cookies are sent over plain HTTP",
    "TEACHLAB_HSTS_SECONDS": "no Strict-Transport-Security header",
    "TEACHLAB_SSL_REDIRECT": "plain-HTTP requests are not redirected to HTTPS",
    "TEACHLAB_PROXY_SSL_HEADER": "X-Forwarded-Proto is not trusted",
}


def secret_key_problem(key: str) -> str:
    """Why `key` is too weak for production, or "" when it is strong enough."""
    if key == LOCAL_SECRET_KEY or key.startswith("django-insecure-"):
        return "is the local default from the repository"
    if len(key) < SECRET_KEY_MIN_LENGTH:
        return f"has {len(key)} characters; it needs at least {SECRET_KEY_MIN_LENGTH}"
    if len(set(key)) < SECRET_KEY_MIN_UNIQUE:
        return (
            f"uses {len(set(key))} different characters; it needs at least {SECRET_KEY_MIN_UNIQUE}"
        )
    return ""


def secret_key_check(key: str) -> None:
    """Raise ImproperlyConfigured, naming TEACHLAB_SECRET_KEY, when `key` is too weak."""
    problem = secret_key_problem(key)
    if problem:
        raise ImproperlyConfigured(
            f"TEACHLAB_SECRET_KEY {problem}. Production mode (TEACHLAB_DEBUG=0) refuses to "
            'start without a strong secret key; make one with: python -c "import secrets; '
            'print(secrets.token_urlsafe(50))"'
        )


def plain_http_off(environ) -> list[str]:
    """The plain-HTTP toggles this environment sets to 0, as 'VARIABLE: effect' lines."""
    return [
        f"{name}=0: {effect}"
        for name, effect in PLAIN_HTTP_TOGGLES.items()
        if environ.get(name, "").strip().lower() in {"0", "false", "no", "off"}
    ]


def plain_http_warn(off: list[str], *, stream=None) -> None:
    """Say once, on stderr, which HTTPS protections are off: fine on a classroom LAN without
    TLS, wrong on the internet."""
    if not off:
        return
    stream = stream or sys.stderr
    lines = "\n".join(f"  - {line}" for line in off)
    stream.write(
        "WARNING teachlab: production mode with HTTPS protections turned off (meant for a "
        f"plain-HTTP room network only):\n{lines}\n"
    )

"""URL converter for the lab's ids (runs, experiment attempts): secrets.token_urlsafe text.

Anything else (a NUL byte, a quote, a path) is no id of ours and resolves to nothing, a 404,
before it reaches a query: PostgreSQL refuses NUL bytes in text with an error, not a miss.
"""

import secrets

from django.urls import register_converter


def lab_token(nbytes: int) -> str:
    """Unguessable, URL-safe, and never starting with "-": ids are typed after commands
    (`manage.py lab tail <run>`), where a leading dash reads as an option (1 id in 64 did)."""
    while True:
        token = secrets.token_urlsafe(nbytes)
        if not token.startswith("-"):
            return token


class TokenConverter:
    regex = "[A-Za-z0-9_-]{1,64}"  # the WebSocket route (routing.py) takes the same

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(TokenConverter, "token")

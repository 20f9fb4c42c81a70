"""URL converter for the lab's ids (runs, experiment attempts): secrets.token_urlsafe text.

Anything else (a NUL byte, a quote, a path) is no id of ours and resolves to nothing, a 404,
before it reaches a query: PostgreSQL refuses NUL bytes in text with an error, not a miss.
"""

from django.urls import register_converter


class TokenConverter:
    regex = "[A-Za-z0-9_-]{1,64}"  # the WebSocket route (routing.py) takes the same

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(TokenConverter, "token")

"""Cookies carrying a NUL character count as absent, for pages and sockets alike.

Python's cookie parser turns a quoted "\\000" into a real NUL, and PostgreSQL answers a query
holding one with an error instead of a miss: a crafted session or seat cookie would be a 500
(or a socket torn down mid-handshake) instead of a visitor without a session.
"""

from __future__ import annotations

from asgiref.sync import iscoroutinefunction
from django.utils.decorators import sync_and_async_middleware


def cookies_clean(cookies: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in cookies.items() if "\x00" not in k and "\x00" not in v}


@sync_and_async_middleware
def nul_cookies_middleware(get_response):
    """Django middleware: before sessions, CSRF and views read request.COOKIES."""
    if iscoroutinefunction(get_response):

        async def middleware(request):
            request.COOKIES = cookies_clean(request.COOKIES)
            return await get_response(request)

    else:

        def middleware(request):
            request.COOKIES = cookies_clean(request.COOKIES)
            return get_response(request)

    return middleware


class NulCookiesSocket:
    """ASGI middleware between Channels' cookie parser and its session middleware."""

    def __init__(self, inner) -> None:
        self.inner = inner

    async def __call__(self, scope, receive, send):
        if "cookies" in scope:
            scope = {**scope, "cookies": cookies_clean(scope["cookies"])}
        return await self.inner(scope, receive, send)

"""The WebSocket origin check: the same rule Django's CSRF check applies to a POST's Origin.

Channels' AllowedHostsOriginValidator compares only the host, so a page on another port of
the same machine (or plain http beside https) could open the presenter's socket. Here the
Origin must be this request's own scheme, host and port, or one of CSRF_TRUSTED_ORIGINS.
"""

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import is_same_domain, split_domain_port, validate_host


def socket_is_secure(scope: dict) -> bool:
    """HttpRequest.is_secure() for a socket: the proxy's header when it is trusted, else the
    scheme the server saw."""
    proxy = settings.SECURE_PROXY_SSL_HEADER
    if proxy:
        name = proxy[0].removeprefix("HTTP_").lower().replace("_", "-").encode("latin1")
        for key, value in scope.get("headers", []):
            if key == name:
                first = value.decode("latin1").split(",", 1)[0].strip()
                return first == proxy[1]
    return scope.get("scheme", "ws") in ("wss", "https")


def own_origin(scope: dict) -> str | None:
    """The origin a page of this server has for the socket's Host, or None for a host Django
    would refuse."""
    host = next((v.decode("latin1") for k, v in scope.get("headers", []) if k == b"host"), "")
    domain, _ = split_domain_port(host)
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    if not domain or not validate_host(domain, allowed):
        return None
    return f"{'https' if socket_is_secure(scope) else 'http'}://{host}"


def trusted_origin(origin: str) -> bool:
    """CSRF_TRUSTED_ORIGINS, read as Django's CsrfViewMiddleware reads it (``*.`` wildcards)."""
    trusted = settings.CSRF_TRUSTED_ORIGINS
    if origin in trusted:
        return True
    try:
        parts = urlsplit(origin)
        netloc = parts.netloc
    except ValueError:
        return False
    for pattern in trusted:
        if "*" not in pattern:
            continue
        wanted = urlsplit(pattern)
        if wanted.scheme == parts.scheme and is_same_domain(netloc, wanted.netloc[1:]):
            return True
    return False


def origin_allowed(scope: dict) -> bool:
    """True when the socket's Origin header is its own origin or a trusted one."""
    origins = [v for k, v in scope.get("headers", []) if k == b"origin"]
    if len(origins) != 1:
        return False
    try:
        origin = origins[0].decode("ascii")
    except UnicodeDecodeError:
        return False
    return origin == own_origin(scope) or trusted_origin(origin)


class OriginChecked:
    """ASGI middleware: a socket whose Origin is not allowed is closed before it opens."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if origin_allowed(scope):
            return await self.app(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)

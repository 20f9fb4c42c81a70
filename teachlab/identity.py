"""Who a request is, for the limits: the client's address (from a forwarded header only when
the direct peer is a proxy we trust), its network (the address, or its /64 for IPv6: one
household or classroom gets one), and a username in the one form every comparison uses."""

from __future__ import annotations

import ipaddress
import unicodedata
from functools import cache

from django.conf import settings


def username_normal(username: str) -> str:
    """NFKC then casefold: 'ｂｏｂ', 'BOB' and 'bob' are one name wherever names are compared
    (the sign-in throttle, sign-up's "is it taken"). Django's own form applies NFKC only."""
    return unicodedata.normalize("NFKC", str(username or "")).casefold().strip()


def axes_username(request, credentials: dict | None = None) -> str:
    """settings.AXES_USERNAME_CALLABLE: the throttle counts and checks the same form."""
    field = settings.AXES_USERNAME_FORM_FIELD
    raw = (credentials or {}).get(field)
    if raw is None and request is not None:
        raw = request.POST.get(field, "")
    return username_normal(raw or "")


@cache
def _trusted(spec: tuple[str, ...]) -> tuple:
    return tuple(ipaddress.ip_network(net, strict=False) for net in spec if net)


def _parse(address: str):
    try:
        return ipaddress.ip_address(address.strip().split("%")[0])
    except ValueError:
        return None


def client_address(request) -> str:
    """The client's address: REMOTE_ADDR, unless the peer is one of
    settings.TRUSTED_PROXIES; then the right-most address in X-Forwarded-For that is not a
    trusted proxy (a client can prepend anything, but not what our proxy appended)."""
    meta = getattr(request, "META", None) or {}
    peer = _parse(meta.get("REMOTE_ADDR") or "")
    if peer is None:
        return "unknown"
    trusted = _trusted(tuple(settings.TRUSTED_PROXIES))
    if not any(peer in net for net in trusted):
        return str(peer)
    hops = [h for h in (meta.get("HTTP_X_FORWARDED_FOR") or "").split(",") if h.strip()]
    for hop in reversed(hops):
        address = _parse(hop)
        if address is None:
            break  # a mangled header: stop at what our own proxy vouched for
        if not any(address in net for net in trusted):
            return str(address)
        peer = address
    return str(peer)


def network_of(address: str) -> str:
    """The unit budgets are shared in: an IPv4 address, or an IPv6 /64."""
    parsed = _parse(address or "")
    if parsed is None:
        return "unknown"
    if parsed.version == 4:
        return str(parsed)
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(ipaddress.ip_network(f"{parsed}/64", strict=False))


def request_network(request) -> str:
    return network_of(client_address(request))

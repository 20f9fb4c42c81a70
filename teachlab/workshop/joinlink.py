"""The address participants type or scan to join a room, and whether it can work for them:
a presenter who opened the page as localhost would otherwise project a link to their own
laptop. TEACHLAB_PUBLIC_URL (settings.WORKSHOP_PUBLIC_URL) names the room's address."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlparse


def host_is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def join_links(*, public_url: str, request_base: str, join_path: str, code: str) -> dict:
    """{"join_page", "join_url", "loopback"}: from the public URL when set, else from the
    address the presenter's own request came in on."""
    base = (public_url or request_base).rstrip("/")
    join_page = f"{base}{join_path}"
    return {
        "join_page": join_page,
        "join_url": f"{join_page}?code={code}",
        "loopback": host_is_loopback(urlparse(base).hostname or ""),
    }

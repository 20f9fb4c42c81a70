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
    """settings.AXES_USERNAME_CALLABLE: the throttle counts and checks the same form, cut to
    the 255 characters axes stores (no real username is longer than 150)."""
    field = settings.AXES_USERNAME_FORM_FIELD
    raw = (credentials or {}).get(field)
    if raw is None and request is not None:
        raw = request.POST.get(field, "")
    return username_normal(raw or "")[:255]


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


def axes_client_ip(request) -> str | None:
    """settings.AXES_CLIENT_IP_CALLABLE: the same address, or None when there is none (a
    sign-in made in code, as the test client's login() does), because axes stores it in an
    IP column that PostgreSQL refuses a word in."""
    address = client_address(request)
    return None if address == "unknown" else address


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


# --- who pays: a learner's own quota, or its network's pool --------------------------------

VISITOR_COOKIE = "teachlab_visitor"
VISITOR_SALT = "teachlab.core.identity.visitor"


def visitor_token(request) -> str:
    """The token of a valid visitor cookie (we signed it, within settings.SESSION_COOKIE_AGE),
    or ""; a forged or stale one counts as none."""
    from django.core import signing

    raw = getattr(request, "COOKIES", {}).get(VISITOR_COOKIE, "")
    if not raw:
        return ""
    try:
        token = signing.TimestampSigner(salt=VISITOR_SALT).unsign(
            raw, max_age=settings.SESSION_COOKIE_AGE
        )
    except signing.BadSignature:
        return ""
    return token if 16 <= len(token) <= 40 else ""


def pool_key(request) -> str:
    """What every cookie-less request of one network shares: one learner's quota."""
    return f"pool:{request_network(request)}"


def payer_for(request, *, learner, created: bool, visitor: str) -> str:
    """Who a learner made by this request pays with. A learner that came with a visitor
    cookie is a person who loaded a page first: their own quota, as long as their network has
    not minted more new learners this hour than settings.ANON_LEARNERS_PER_NETWORK_PER_HOUR
    (sized for a class behind one router). A request with neither session nor visitor cookie
    pays from its network's pool, so dropping cookies in a loop buys nothing."""
    from teachlab.core import ratelimits

    if not visitor:
        return pool_key(request)
    if not created:
        return learner.key
    budget = ratelimits.Budget("new-learners", settings.ANON_LEARNERS_PER_NETWORK_PER_HOUR, 3600)
    try:
        over = ratelimits.spend(budget, request_network(request))
    except Exception:  # noqa: BLE001 - Redis away: the quotas themselves will say so
        over = 0
    return pool_key(request) if over else learner.key


def visitor_cookie_middleware(get_response):
    """Hands a newcomer's page view a signed visitor cookie (no database row): the next
    request that needs a learner makes one keyed on it, with a quota of its own."""

    def middleware(request):
        response = get_response(request)
        has_session = settings.SESSION_COOKIE_NAME in request.COOKIES
        if (
            request.method == "GET"
            and not has_session
            and not visitor_token(request)
            and response.status_code == 200
            and response.get("Content-Type", "").startswith("text/html")
        ):
            from django.core import signing

            from lessons.models import new_learner_key

            response.set_cookie(
                VISITOR_COOKIE,
                signing.TimestampSigner(salt=VISITOR_SALT).sign(new_learner_key()),
                max_age=settings.SESSION_COOKIE_AGE,
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response

    return middleware


def payer_of(learner) -> str:
    """The key a learner's quotas are charged to (set by lessons.learners); its own key for a
    learner that came from elsewhere (a test, a management command)."""
    return getattr(learner, "payer", None) or learner.key


def is_pooled(learner) -> bool:
    return payer_of(learner).startswith("pool:")


POOLED_MESSAGE = (
    "This request came without the cookie your browser keeps for this site, so it cannot "
    "start anything of its own. Reload the page (and allow cookies for this site), then try again."
)

"""`/healthz` (the process answers) and `/readyz` (what it needs answers too), for container
probes and load balancers.

Answered by a middleware at the top of the stack, before the HTTPS redirect: a probe asks over
plain HTTP. /healthz answers any Host (it says only "ok"); /readyz names the lanes, so it is
host-checked like every page. Its report is kept READY_TTL seconds and made by one request at a
time over one kept connection per broker: 40 probes at once were 40 x 10 fresh connections in
threads of their own (issue 26: 19 -> 200 threads, a page stalled 4.2 s).
"""

from __future__ import annotations

import threading
import time
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.db import connection
from django.http import HttpResponse, JsonResponse

UP, DOWN = "up", "down"
READY_TTL = 1.5  # seconds a report is served again: a probe every few seconds still sees news

_ready_lock = threading.Lock()
_ready: dict[tuple, tuple[float, dict]] = {}  # configuration -> (made at, report)
_brokers: dict[str, object] = {}  # broker address -> its kept client (redis.Redis or kombu)


def database_status() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return UP
    except Exception:  # noqa: BLE001 - any failure is "down"
        return DOWN


def redis_status() -> str:
    from teachlab.lab.runs.store import app_redis

    try:
        app_redis().ping()
        return UP
    except Exception:  # noqa: BLE001
        return DOWN


def _broker_address(url: str) -> str:
    """The server a URL names, without the database or vhost: lanes on one Redis share one
    connection, since PING does not care which database it is sent to."""
    parts = urlsplit(url)
    path = parts.path if parts.scheme.startswith("amqp") else ""
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _redis_ping(address: str) -> None:
    import redis

    client = _brokers.get(address)
    if client is None:
        # One connection at most, kept between probes (a pool of one).
        client = _brokers[address] = redis.Redis.from_url(
            address, socket_connect_timeout=1, socket_timeout=1, max_connections=1
        )
    client.ping()


def _rabbit_ping(address: str) -> None:
    from kombu import Connection

    conn = _brokers.get(address)
    if conn is None:
        conn = _brokers[address] = Connection(address, connect_timeout=2, heartbeat=0)
    try:
        # a refusal is the answer: no retry, which would sleep 2 s first
        conn.ensure_connection(max_retries=0, timeout=2)
        # A round trip on the kept connection: a passive declare of a built-in exchange.
        conn.default_channel.exchange_declare("amq.direct", "direct", passive=True)
    except Exception:
        _brokers.pop(address, None)  # dead or half-open: the next probe connects afresh
        conn.release()
        raise


def broker_status(kind: str, url: str) -> str:
    try:
        (_redis_ping if kind == "redis" else _rabbit_ping)(_broker_address(url))
        return UP
    except Exception:  # noqa: BLE001 - any failure is "down"
        return DOWN


def lanes_status() -> dict[str, str]:
    """Each lab lane's broker, asked now over its kept connection, each broker once."""
    from teachlab.lab.runs.lanes import lanes

    asked: dict[str, str] = {}
    found = {}
    for lane in lanes():
        address = _broker_address(lane.broker_url)
        if address not in asked:
            asked[address] = broker_status(lane.kind, lane.broker_url)
        found[lane.name] = asked[address]
    return found


def readiness_report() -> dict:
    """{"status": "up"|"down", "checks": {"database", "redis", "lanes": {name: status}}}."""
    checks = {"database": database_status(), "redis": redis_status(), "lanes": lanes_status()}
    parts = [checks["database"], checks["redis"], *checks["lanes"].values()]
    return {"status": UP if all(p == UP for p in parts) else DOWN, "checks": checks}


def readiness_cached() -> dict:
    """The report of the last READY_TTL seconds, or a new one; concurrent probes wait for the
    one being made instead of each making their own."""
    key = (settings.REDIS_URL, settings.RABBIT_URL, repr(settings.LAB_EXTRA_LANES))
    with _ready_lock:
        kept = _ready.get(key)
        if kept is None or time.monotonic() - kept[0] >= READY_TTL:
            _ready.clear()
            kept = _ready[key] = (time.monotonic(), readiness_report())
        return kept[1]


class HealthMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        if request.method in {"GET", "HEAD"}:
            if request.path == "/healthz":
                return HttpResponse("ok", content_type="text/plain")
            if request.path == "/readyz":
                request.get_host()  # a Host not in ALLOWED_HOSTS: 400, as for every page
                report = readiness_cached()
                return JsonResponse(report, status=200 if report["status"] == UP else 503)
        return self.get_response(request)

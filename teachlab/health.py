"""`/healthz` (the process answers) and `/readyz` (what it needs answers too), for container
probes and load balancers.

Answered by a middleware at the top of the stack, before the host check and the HTTPS
redirect: a probe asks by IP over plain HTTP, with no Host a deployment would list.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from django.db import connection
from django.http import HttpResponse, JsonResponse

UP, DOWN = "up", "down"


def database_status() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return UP
    except Exception:  # noqa: BLE001 - any failure is "down"
        return DOWN


def redis_status() -> str:
    from teachlab.lab.store import app_redis

    try:
        app_redis().ping()
        return UP
    except Exception:  # noqa: BLE001
        return DOWN


def lanes_status() -> dict[str, str]:
    """Each lab lane's broker, asked now (not the pages' few-seconds cache), all at once so a
    dead broker costs one connect timeout, not one per lane."""
    from teachlab.lab.lanes import lane_status, lanes

    found = lanes()
    with ThreadPoolExecutor(max_workers=max(1, len(found))) as pool:
        answers = pool.map(lambda lane: lane_status(lane, fresh=True).available, found)
        return {lane.name: UP if ok else DOWN for lane, ok in zip(found, answers, strict=True)}


def readiness_report() -> dict:
    """{"status": "up"|"down", "checks": {"database", "redis", "lanes": {name: status}}}."""
    checks = {"database": database_status(), "redis": redis_status(), "lanes": lanes_status()}
    parts = [checks["database"], checks["redis"], *checks["lanes"].values()]
    return {"status": UP if all(p == UP for p in parts) else DOWN, "checks": checks}


class HealthMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        if request.method in {"GET", "HEAD"}:
            if request.path == "/healthz":
                return HttpResponse("ok", content_type="text/plain")
            if request.path == "/readyz":
                report = readiness_report()
                return JsonResponse(report, status=200 if report["status"] == UP else 503)
        return self.get_response(request)

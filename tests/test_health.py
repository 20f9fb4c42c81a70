"""/healthz and /readyz against the session's real Redis, the test database and RabbitMQ."""

from __future__ import annotations

import time

import pytest
from django.test import Client

from teachlab.lab.runs.lanes import lane_status, lanes
from tests.stack import free_port, missing

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_readiness():
    """No report kept from another test: each one here times its own window."""
    from teachlab.core import health

    health._ready.clear()
    yield health
    health._ready.clear()


def test_healthz_answers_ok_for_any_host_over_plain_http(settings):
    settings.ALLOWED_HOSTS = ["teachlab.example.org"]
    settings.SECURE_SSL_REDIRECT = True  # a probe asks by IP over HTTP, behind the redirect
    response = Client().get("/healthz", HTTP_HOST="10.0.0.7:8000")
    assert response.status_code == 200
    assert response.content == b"ok"
    # Every other path still goes through the host check.
    assert Client().get("/", HTTP_HOST="10.0.0.7:8000").status_code == 400


def test_readyz_reports_each_part_up_when_the_database_redis_and_every_lane_answer():
    down = [lane.name for lane in lanes() if not lane_status(lane, fresh=True).available]
    if down:
        missing(f"readyz needs every lane's broker; these do not answer: {down}")
    response = Client().get("/readyz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "up"
    assert body["checks"]["database"] == "up"
    assert body["checks"]["redis"] == "up"
    assert set(body["checks"]["lanes"]) == {lane.name for lane in lanes()}
    assert set(body["checks"]["lanes"].values()) == {"up"}


def test_readyz_answers_503_naming_a_lane_whose_broker_is_on_a_dead_port(settings):
    dead = f"redis://127.0.0.1:{free_port()}/0"
    settings.LAB_EXTRA_LANES = [
        *settings.LAB_EXTRA_LANES,
        {"name": "dead-lane", "broker": "redis", "url": dead, "listed": False},
    ]
    response = Client().get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "down"
    assert body["checks"]["lanes"]["dead-lane"] == "down"
    assert body["checks"]["database"] == "up" and body["checks"]["redis"] == "up"


def test_readyz_reports_redis_down_when_the_apps_redis_does_not_answer(settings):
    from teachlab.lab.runs.store import _client

    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}"
    try:
        body = Client().get("/readyz").json()
    finally:
        _client.cache_clear()
    assert body["status"] == "down"
    assert body["checks"]["redis"] == "down"
    assert body["checks"]["lanes"]["redis-short"] == "down"


def test_readyz_refuses_a_host_the_site_does_not_serve_like_every_page(settings, fresh_readiness):
    settings.ALLOWED_HOSTS = ["teachlab.example.org"]
    assert Client().get("/readyz", HTTP_HOST="evil.example").status_code == 400
    assert Client().get("/readyz", HTTP_HOST="teachlab.example.org").status_code in {200, 503}


def test_forty_readyz_calls_at_once_share_one_report_over_kept_connections(fresh_readiness):
    """Without the kept report and connections each call opened one connection per lane (and a
    thread per lane): 40 calls were hundreds of connections to the session's Redis."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from teachlab.lab.runs.store import app_redis

    def opened() -> int:
        return int(app_redis().info("stats")["total_connections_received"])

    Client().get("/readyz")  # the kept connections are made once
    fresh_readiness._ready.clear()
    before, threads_before = opened(), threading.active_count()
    peak = [threads_before]

    def probe(_):
        peak[0] = max(peak[0], threading.active_count())
        return Client().get("/readyz").content

    with ThreadPoolExecutor(max_workers=8) as pool:
        bodies = set(pool.map(probe, range(40)))
    assert len(bodies) == 1, "calls within the window answer the same report"
    assert opened() - before <= 1, f"{opened() - before} new connections to Redis for 40 calls"
    assert peak[0] <= threads_before + 8  # the pool's own threads, none per lane


def test_a_second_readyz_within_the_window_is_the_kept_report_then_news_after_it(
    settings, fresh_readiness, tmp_path
):
    from tests.support.redis_server import RedisServer

    broker = RedisServer(tmp_path).start()
    settings.LAB_EXTRA_LANES = [
        *settings.LAB_EXTRA_LANES,
        {"name": "brief-lane", "broker": "redis", "url": f"{broker.url}/0", "listed": False},
    ]
    try:
        first = Client().get("/readyz").json()
        assert first["checks"]["lanes"]["brief-lane"] == "up"
        broker.stop()
        second = Client().get("/readyz").json()  # well within READY_TTL of the first
        assert second == first
        time.sleep(fresh_readiness.READY_TTL + 0.1)
        third = Client().get("/readyz").json()
        assert third["checks"]["lanes"]["brief-lane"] == "down"
    finally:
        broker.stop()

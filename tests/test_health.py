"""/healthz and /readyz against the session's real Redis, the test database and RabbitMQ."""

from __future__ import annotations

import pytest
from django.test import Client

from teachlab.lab.lanes import lane_status, lanes
from tests.stack import free_port, missing

pytestmark = pytest.mark.django_db


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
    from teachlab.lab.store import _client

    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}"
    try:
        body = Client().get("/readyz").json()
    finally:
        _client.cache_clear()
    assert body["status"] == "down"
    assert body["checks"]["redis"] == "down"
    assert body["checks"]["lanes"]["redis-short"] == "down"

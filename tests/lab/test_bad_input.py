"""Garbage sent to every lab form and URL gets an answer below 500 and fires nothing."""

from __future__ import annotations

import pytest
from django.test import Client

from lessons.learners import SESSION_KEY
from lessons.models import Learner
from teachlab.lab.experiments.catalog import experiments_load
from teachlab.lab.models import Run

pytestmark = pytest.mark.django_db

HUGE = "9" * 40
RUN_FORMS = [
    {"lane": "redis-short", "countdown": "1", "count": "1", "prediction": HUGE},
    {"lane": "redis-short", "countdown": "1", "count": HUGE},
    {"lane": "redis-short", "countdown": "1e308", "count": "1"},
    {"lane": "redis-short", "countdown": "inf", "count": "1"},
    {"lane": "redis-short", "countdown": "nan", "count": "1"},
    {"lane": "redis-short", "countdown": "1", "count": "1", "expires": "1e300"},
    {"lane": "redis-short", "countdown": "1", "count": "1", "spacing": "1e300"},
    {"lane": "redis-short", "eta": "9999-12-31T23:59:59", "count": "1"},
    {"lane": "redis-short", "eta": "0001-01-01T00:00:00", "count": "1"},
    {"lane": "redis-short\x00", "countdown": "1", "count": "1"},
    {"lane": ["redis-short", "redis-long"], "countdown": ["1", "x"], "count": "1"},
    {"lane": "redis-short", "countdown": "1", "count": "1", "prediction": "-1"},
    {},
]


def _client() -> Client:
    client = Client(raise_request_exception=False)
    session = client.session
    session[SESSION_KEY] = Learner.objects.create().key
    session.save()
    return client


@pytest.mark.parametrize("data", RUN_FORMS)
def test_a_garbage_run_form_is_refused_with_a_message_not_a_500(data):
    response = _client().post("/lab/", data)
    assert response.status_code == 400
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"\xff\xfe\x00garbage", "application/x-www-form-urlencoded"),
        (b'{"lane": 1}', "application/json"),
        (b"--x\r\n", "multipart/form-data; boundary=x"),
    ],
)
def test_a_garbage_request_body_is_not_a_500(body, content_type):
    response = _client().generic("POST", "/lab/", body, content_type=content_type)
    assert response.status_code < 500
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    "path",
    [
        "/lab/workers/%00/crash/",
        "/lab/workers/" + "x" * 5000 + "/crash/",
        "/lab/workers/redis-short-1/explode/",
        "/lab/workers/a%20b/restart/",
    ],
)
def test_worker_controls_with_odd_names_are_not_a_500(path, settings):
    settings.LAB_LOCAL_CONTROLS = True
    assert _client().post(path, {"x": "y"}).status_code < 500


@pytest.mark.parametrize("run_id", ["%00", "x" * 5000, "..", "%F0%9F%92%A9", "'; drop table"])
@pytest.mark.parametrize("suffix", ["", "export.csv", "export.json"])
def test_odd_run_ids_are_a_404(run_id, suffix):
    client = _client()
    assert client.get(f"/lab/runs/{run_id}/{suffix}").status_code == 404
    assert client.get(f"/lab/experiments/runs/{run_id}/").status_code == 404


@pytest.mark.parametrize(
    "prediction", [HUGE, "1e400", "nan", "inf", "-1", "\x00", "", "x" * 100_000]
)
def test_a_garbage_prediction_starts_no_experiment(prediction, settings):
    settings.LAB_LOCAL_CONTROLS = True
    client = _client()
    for experiment in experiments_load():
        response = client.post(f"/lab/experiments/{experiment.slug}/", {"prediction": prediction})
        assert response.status_code == 400, experiment.slug
    assert not Run.objects.exists()


@pytest.mark.parametrize("query", ["known=x", "known=" + "9" * 50, "watch=" + "x" * 1000])
def test_odd_attempt_status_queries_are_not_a_500(query):
    status = _client().get(f"/lab/experiments/countdown-beyond-timeout/attempts/x/status/?{query}")
    assert status.status_code == 404

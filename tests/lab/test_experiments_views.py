"""Experiment pages: the list, the prediction form, clear refusals, and nobody else's attempts."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils.html import escape

from lessons.models import Learner
from teachlab.lab.experiments.catalog import experiments_load
from teachlab.lab.experiments.models import Attempt

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(settings):
    settings.ALLOWED_HOSTS = ["testserver"]
    client = Client()
    client.get("/lab/experiments/")  # a browser reads the page first (its visitor cookie)
    return client


def test_the_list_shows_every_experiment_with_a_link(client):
    page = client.get("/lab/experiments/").content.decode()
    for experiment in experiments_load():
        assert f'href="/lab/experiments/{experiment.slug}/"' in page


def test_every_experiment_page_asks_its_question_and_takes_a_prediction(client):
    for experiment in experiments_load():
        response = client.get(f"/lab/experiments/{experiment.slug}/")
        assert response.status_code == 200
        page = response.content.decode()
        assert escape(experiment.prediction["prompt"]) in page
        assert 'name="prediction"' in page and "Run the experiment" in page


def test_every_lesson_that_names_an_experiment_links_a_page_that_exists(client):
    import yaml

    from teachlab.lab.experiments.catalog import lessons_dir

    for path in sorted(lessons_dir().glob("*.yaml")):
        lesson = yaml.safe_load(path.read_text())
        page = client.get(f"/q/{lesson['slug']}/").content.decode()
        for slug in lesson.get("experiments") or []:
            assert f"/lab/experiments/{slug}/" in page, f"{path.name} page does not link {slug}"
            assert client.get(f"/lab/experiments/{slug}/").status_code == 200


def test_a_prediction_that_is_not_a_number_is_refused_with_a_message(client):
    response = client.post("/lab/experiments/countdown-beyond-timeout/", {"prediction": "lots"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "must be a number" in page and 'value="lots"' in page
    assert not Attempt.objects.exists()


def test_a_choice_that_is_not_offered_is_refused(client):
    response = client.post("/lab/experiments/expires-before-due/", {"prediction": "<b>x"})
    assert response.status_code == 400
    assert "Pick one of the choices" in response.content.decode()


def test_starting_without_a_prediction_asks_for_one(client):
    response = client.post("/lab/experiments/countdown-beyond-timeout/", {})
    assert response.status_code == 400
    assert "Make a prediction first" in response.content.decode()


def test_an_unknown_experiment_is_a_404(client):
    assert client.get("/lab/experiments/no-such-thing/").status_code == 404


def _learner_client(settings) -> tuple[Client, Learner]:
    from tests.lessons.quiz_support import client_learner

    client = Client()
    client.get("/lab/experiments/")  # reading makes no learner: client_learner makes one
    return client, client_learner(client)


def test_a_finished_attempt_shows_prediction_checks_and_explanation(client, settings):
    client, learner = _learner_client(settings)
    attempt = Attempt.objects.create(
        learner=learner,
        slug="countdown-within-timeout",
        prediction={"kind": "number", "value": 2},
        status=Attempt.Status.DONE,
        result={
            "passed": True,
            "checks": [
                {
                    "says": "The task was delivered exactly once.",
                    "run": "main",
                    "passed": True,
                    "expected": "every task: receipts = 1",
                    "observed": "1",
                }
            ],
            "errors": [],
            "runs": {
                "main": {
                    "id": "r1",
                    "lane": "redis-fast-sweep",
                    "steps": [],
                    "versions": {"redis": "7.0.15", "celery": "5.7.0"},
                    "versions_text": "Redis 7.0.15 · celery 5.7.0",
                }
            },
            "prediction": {
                "kind": "number",
                "value": 2,
                "observed": 1.0,
                "observed_label": "1",
                "unit": "receipts",
                "matched": False,
            },
        },
    )
    page = client.get(f"/lab/experiments/countdown-within-timeout/attempts/{attempt.id}/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "The task was delivered exactly once." in text and "observed 1" in text
    assert "No: look at the checks" in text
    assert "Measured on: redis-fast-sweep: Redis 7.0.15 · celery 5.7.0" in text
    assert 'href="/q/raise-visibility-timeout/basics/"' in text  # the explanation's tier link


def test_someone_elses_attempt_looks_missing(client, settings):
    other = Learner.objects.create()
    attempt = Attempt.objects.create(learner=other, slug="countdown-within-timeout")
    response = client.get(f"/lab/experiments/countdown-within-timeout/attempts/{attempt.id}/")
    assert response.status_code == 404
    status = client.get(f"/lab/experiments/countdown-within-timeout/attempts/{attempt.id}/status/")
    assert status.status_code == 404


def test_experiments_that_stop_workers_are_refused_outside_a_local_lab(client, settings):
    settings.LAB_LOCAL_CONTROLS = False
    settings.DEBUG = False
    page = client.get("/lab/experiments/early-ack-crash/").content.decode()
    assert "runs only on a local lab" in page and "disabled" in page
    response = client.post("/lab/experiments/early-ack-crash/", {"prediction": "lost"})
    assert response.status_code == 403
    assert not Attempt.objects.exists()


def test_a_finished_batch_shows_copies_per_task_and_receipts_over_time(client, settings):
    from teachlab.lab.models import Run, RunEvent

    client, learner = _learner_client(settings)
    ids = [f"task-{i}" for i in range(6)]
    run = Run.objects.create(
        learner=learner, lane="redis-short", task_ids=ids, status="done", fired_at=1000.0
    )
    seq = 0
    for i, task_id in enumerate(ids):
        copies = 1 if i < 3 else 3  # three tasks ran once, three ran three times
        for copy in range(1, copies + 1):
            for kind, t in (("received", 10.0 * (copy - 1)), ("started", 30.0)):
                seq += 1
                RunEvent.objects.create(
                    run=run, seq=seq, kind=kind, task_id=task_id, index=i, copy=copy,
                    worker="w", redelivered=copy > 1, at=1000.0 + t, t=t,
                )  # fmt: skip
    attempt = Attempt.objects.create(
        learner=learner,
        slug="paced-batch-vs-feeder",
        prediction={"kind": "number", "value": 2},
        status=Attempt.Status.DONE,
        runs={"batch": run.id},
        result={"passed": False, "checks": [], "errors": [], "runs": {}, "prediction": {}},
    )
    page = client.get(f"/lab/experiments/paced-batch-vs-feeder/attempts/{attempt.id}/")
    text = page.content.decode()
    assert "Tasks by how many times their body ran" in text
    assert "Amplification: <strong>2.00×</strong>" in text  # (3×1 + 3×3) / 6
    assert "1×</span>" in text and "3×</span>" in text
    assert "Receipts over time" in text
    # The watched run is over, so its counters give the amplification too, as the run page does.
    counter = text[text.index('data-counter="amplification"') :].split("</dd>")[0]
    assert "2.00×" in counter and "after the run" not in counter


def test_any_run_of_the_learner_has_a_copies_per_task_page_and_fragment(client, settings):
    from teachlab.lab.models import Run, RunEvent

    client, learner = _learner_client(settings)
    run = Run.objects.create(learner=learner, lane="redis-short", task_ids=["a"], fired_at=1000.0)
    for seq, (kind, t) in enumerate((("received", 0.0), ("received", 11.0), ("started", 25.0))):
        RunEvent.objects.create(
            run=run, seq=seq + 1, kind=kind, task_id="a", index=0, copy=1 + (seq == 1),
            worker="w", redelivered=seq == 1, at=1000.0 + t, t=t,
        )  # fmt: skip
    page = client.get(f"/lab/experiments/runs/{run.id}/").content.decode()
    assert "Tasks by how many times their body ran" in page and "Amplification" in page
    fragment = client.get(f"/lab/experiments/runs/{run.id}/", HTTP_HX_REQUEST="true")
    assert "<html" not in fragment.content.decode()
    assert "hist-bars" in fragment.content.decode()
    stranger = Client()
    assert stranger.get(f"/lab/experiments/runs/{run.id}/").status_code == 404


def test_the_status_poll_shows_the_step_and_refreshes_when_a_run_fires_or_it_ends(client, settings):
    client, learner = _learner_client(settings)
    attempt = Attempt.objects.create(
        learner=learner, slug="crash-vs-warm-shutdown", step="crash: crashed (SIGKILL) w1"
    )
    url = f"/lab/experiments/crash-vs-warm-shutdown/attempts/{attempt.id}/status/"
    polled = client.get(f"{url}?known=0", HTTP_HX_REQUEST="true")
    assert "crash: crashed (SIGKILL) w1" in polled.content.decode()
    assert 'hx-trigger="every 1s"' in polled.content.decode()
    attempt.runs = {"crash": "some-run-id"}
    attempt.save()
    assert client.get(f"{url}?known=0").headers.get("HX-Refresh") == "true"
    assert client.get(f"{url}?known=nonsense").headers.get("HX-Refresh") == "true"
    attempt.status = Attempt.Status.DONE
    attempt.save()
    assert client.get(f"{url}?known=1").headers.get("HX-Refresh") == "true"


def test_the_page_shows_where_lab_matrix_verified_the_experiment(client, settings, tmp_path):
    import json

    from teachlab.lab.matrix.records import experiment_digest

    settings.LAB_VERIFIED_DIR = str(tmp_path)
    slug = "countdown-within-timeout"
    record = {
        "combination": {"celery": "5.5", "redis": "6.0"},
        "versions": {"celery": "5.5.3", "kombu": "5.5.4", "redis": "6.0.9"},
        "verdict": "holds",
        "at": "2026-12-05T12:00:00+00:00",
    }
    stale = {**record, "combination": {"celery": "5.7", "redis": "7.0"}, "digest": "0" * 64}
    stale["versions"] = {"celery": "5.7.0", "kombu": "5.7.0", "redis": "7.0.15"}
    body = {"records": [{**record, "digest": experiment_digest(slug)}, stale]}
    (tmp_path / f"{slug}.json").write_text(json.dumps(body))
    page = client.get(f"/lab/experiments/{slug}/").content.decode()
    assert "Verified on" in page
    assert "5.5.3" in page and "6.0.9" in page
    assert "5.7.0" not in page  # a record of another version of the file is not shown
    settings.LAB_VERIFIED_DIR = str(tmp_path / "none")
    assert "Verified on" not in client.get(f"/lab/experiments/{slug}/").content.decode()


def test_the_verified_table_shows_a_skip_with_its_whole_reason(client, settings, tmp_path):
    import json

    from teachlab.lab.matrix.records import experiment_digest

    settings.LAB_VERIFIED_DIR = str(tmp_path)
    slug = "countdown-beyond-timeout"
    reason = "needs kombu >=5.7 (this one has 5.5.4): " + "older kombu sweeps slowly " * 10
    record = {
        "combination": {"celery": "5.5", "redis": "7.0"},
        "versions": {"celery": "5.5.3", "kombu": "5.5.4", "redis-py": "5.2.1"},
        "verdict": "skipped",
        "reason": reason,
        "at": "2026-12-05T12:00:00+00:00",
        "digest": experiment_digest(slug),
    }
    (tmp_path / f"{slug}.json").write_text(json.dumps({"records": [record]}))
    page = client.get(f"/lab/experiments/{slug}/").content.decode()
    assert "5.5.3" in page and "7.0 (asked)" in page
    assert f"skipped: {escape(reason)}" in page

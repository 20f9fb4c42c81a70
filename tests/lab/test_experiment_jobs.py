"""Experiment attempts run in the project's jobs worker, not in the web process: one queued
through a web process finishes after that process is gone, an attempt whose broker is down
gets a message, and a lost attempt is failed with the reason instead of hanging."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from tests.stack import BASE_DIR, STATE, free_port, manage
from tests.stack import test_env as stack_env
from tests.support.http import Visitor
from tests.support.servers import LiveServer

SLUG = "countdown-within-timeout"  # about 14 s on redis-short
SERVER_ENV = {"TEACHLAB_LOCAL_CONTROLS": "1", "TEACHLAB_ALLOWED_HOSTS": "127.0.0.1,localhost"}


def _predict(learner: Visitor, base: str) -> tuple[int, str, str]:
    """The experiment's form sent with a prediction of 1: (status, final url, page)."""
    form = f"{base}/lab/experiments/{SLUG}/"
    url, status, page = learner.post(form, form, {"prediction": "1"})
    return status, url, page


def _attempt_row(attempt_id: str, env: dict[str, str]) -> dict:
    """The stored attempt, read by a separate process through the app's own database."""
    code = (
        "import json; from teachlab.lab.experiments.models import Attempt; "
        f"a = Attempt.objects.get(id={attempt_id!r}); "
        "print(json.dumps({'status': a.status, 'worker': a.worker, 'error': a.error, "
        "'checks': len(a.result.get('checks', [])), 'runs': a.runs}))"
    )
    return json.loads(manage("shell", "-c", code, **env).stdout.strip().splitlines()[-1])


@pytest.mark.broker
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_an_attempt_finishes_in_the_jobs_worker_after_its_web_process_is_gone(lab_stack):
    env = {**SERVER_ENV, **lab_stack.env}
    learner = Visitor()
    first = LiveServer(**env).start()
    try:
        status, url, _ = _predict(learner, first.url)
    finally:
        first.stop()  # the web process that took the attempt is gone
    assert status == 200, url
    found = re.search(rf"/lab/experiments/{SLUG}/attempts/([\w-]+)/$", url)
    assert found, f"the form did not lead to the attempt page: {url}"
    attempt_id = found.group(1)
    assert first.proc.poll() is not None

    second = LiveServer(**env).start()  # a restarted web process, same learner's cookies
    try:
        attempt_url = f"{second.url}/lab/experiments/{SLUG}/attempts/{attempt_id}/"
        page = _poll_attempt(learner, attempt_url, "Prediction against observation", within=120)
    finally:
        second.stop()
    assert "Prediction against observation" in page, page[-3000:]
    assert "Every check passed" in page

    row = _attempt_row(attempt_id, lab_stack.env)
    jobs_pid = lab_stack.workers.procs["jobs"].pid
    assert row["status"] == "done" and row["checks"] > 0 and row["runs"], row
    assert row["worker"].endswith(f" pid {jobs_pid}"), row["worker"]
    assert jobs_pid not in {os.getpid(), first.proc.pid, second.proc.pid}
    # The jobs worker is the site's, not a lab worker: never in the lab's registry or controls.
    from teachlab.lab.worker.workers import workers_list

    assert not [w["name"] for w in workers_list() if w["name"].startswith("jobs")]


def _poll_attempt(learner: Visitor, url: str, text: str, within: float) -> str:
    deadline = time.monotonic() + within
    page = ""
    while time.monotonic() < deadline:
        page = learner.open("GET", url).text
        if text in page:
            break
        time.sleep(1)
    return page


@pytest.mark.broker
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_an_attempt_whose_jobs_worker_is_killed_is_failed_with_the_reason(lab_stack):
    """SIGKILL the jobs worker mid-attempt: the page says so about BEAT_LOST seconds later.
    A jobs queue of its own (database 9), so the session's jobs worker cannot take it."""
    from teachlab.celery import jobs_worker_argv

    env = {**SERVER_ENV, **lab_stack.env, "TEACHLAB_REDIS_DB_JOBS": "9"}
    log_path = STATE / "jobs-doomed.log"
    with open(log_path, "wb") as log:
        worker = subprocess.Popen(
            jobs_worker_argv("jobs-doomed"),
            cwd=BASE_DIR,
            env=stack_env(**env),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = LiveServer(**env).start()
    learner = Visitor()
    try:
        deadline = time.monotonic() + 60
        while " ready." not in log_path.read_text(errors="replace"):
            assert time.monotonic() < deadline, log_path.read_text(errors="replace")
            time.sleep(0.2)
        status, url, page = _predict(learner, server.url)
        assert status == 200 and "Running the steps" in page, url
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
        killed = time.monotonic()
        page = _poll_attempt(learner, url, "stopped (no sign of it", within=70)
        waited = time.monotonic() - killed
    finally:
        server.stop()
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
    assert "The jobs worker running this experiment stopped" in page, page[-3000:]
    assert "Try again" in page
    assert waited > 20  # the beats carried it until the worker died: no early give-up


@pytest.mark.slow  # a server process of its own: 8-9 s
@pytest.mark.timeout(120)
def test_an_attempt_whose_jobs_broker_is_down_gets_a_message_not_a_500():
    dead = f"redis://127.0.0.1:{free_port()}/4"  # nothing listens there
    server = LiveServer(**SERVER_ENV, TEACHLAB_CELERY_BROKER_URL=dead).start()
    learner = Visitor()
    try:
        status, _, page = _predict(learner, server.url)
        listing = learner.open("GET", f"{server.url}/lab/experiments/").text
    finally:
        server.stop()
    assert status == 503
    assert "could not queue this experiment" in page and "Nothing ran" in page
    assert dead.split("//")[1].split("/")[0] not in page  # no broker address (issue 26)
    assert 'value="1"' in page  # the prediction is kept in the form to try again
    assert "Your last try could not run" in listing


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"status": "running", "beat_at": -31, "started_at": -40}, "jobs worker running this"),
        ({"status": "running", "beat_at": -1, "started_at": -400}, "far past its planned"),
        ({"status": "queued"}, "No jobs worker took this experiment"),
    ],
)
def test_a_lost_attempt_is_failed_with_the_reason_instead_of_hanging(settings, fields, says):
    from teachlab.lab.experiments.models import Attempt
    from tests.lessons.quiz_support import client_learner

    settings.ALLOWED_HOSTS = ["testserver"]
    client = Client()
    client.get("/lab/experiments/")
    learner = client_learner(client)  # reading a page makes no learner; acting would
    now = timezone.now()
    times = {k: now + timedelta(seconds=v) for k, v in fields.items() if k != "status"}
    attempt = Attempt.objects.create(learner=learner, slug=SLUG, status=fields["status"], **times)
    url = f"/lab/experiments/{SLUG}/attempts/{attempt.id}/"
    if fields["status"] == "queued":  # fresh, it waits; past QUEUE_WAIT, it is given up
        assert "Waiting for the jobs worker" in client.get(url).content.decode()
        Attempt.objects.filter(id=attempt.id).update(created_at=now - timedelta(seconds=400))
    page = client.get(url).content.decode()
    attempt.refresh_from_db()
    assert attempt.status == "failed" and says in attempt.error
    assert says in page

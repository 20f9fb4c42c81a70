"""The lab's pages: the run form's answers to bad input and limits, ownership, worker controls."""

from __future__ import annotations

import html
import re
import time

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lessons.learners import SESSION_KEY
from lessons.models import Learner
from teachlab.lab.models import Run, RunEvent

pytestmark = pytest.mark.django_db


def _client_for(learner: Learner) -> Client:
    client = Client()
    session = client.session
    session[SESSION_KEY] = learner.key
    session.save()
    return client


def _run(learner: Learner, **extra) -> Run:
    now = time.time()
    run = Run.objects.create(
        learner=learner,
        lane="redis-short",
        params={"count": 1, "countdown": 25},
        task_ids=["task-a"],
        visibility_timeout=10,
        fired_at=now - 40,
        settled_at=now - 5,
        status=Run.Status.DONE,
        prediction=2,
        **extra,
    )
    for n in range(3):
        RunEvent.objects.create(
            run=run,
            seq=n + 1,
            kind="received",
            task_id="task-a",
            index=0,
            copy=n + 1,
            worker="redis-short-1@test",
            redelivered=n > 0,
            at=now - 40 + 10 * n,
            t=10.0 * n,
            eta=now - 15,
        )
    return run


@pytest.fixture
def learner() -> Learner:
    return Learner.objects.create()


@pytest.fixture
def client(learner) -> Client:
    return _client_for(learner)


def test_lab_home_shows_every_listed_lane_and_the_run_form(client):
    page = client.get("/lab/").content.decode()
    for lane in ("redis-short", "redis-long", "rabbit-quorum"):
        assert lane in page
    assert "How many tasks" in page and "csrfmiddlewaretoken" in page
    assert "redis-shared-long" not in page  # an experiment's lane, not listed


def test_an_unavailable_lane_says_why_and_how_to_get_its_broker(client, settings):
    settings.RABBIT_URL = "amqp://guest:guest@127.0.0.1:1//"
    settings.LAB_LOCAL_CONTROLS = True  # a local run: the details are the learner's own machine
    page = client.get("/lab/").content.decode()
    assert "Unavailable" in page
    assert "does not answer" in page and "rabbitmq-server" in page
    assert "Fire" in page  # the rest of the lab still works


def test_every_lane_of_a_refusing_rabbitmq_costs_one_quick_probe_not_one_retry_each(settings):
    """Four lanes share the RabbitMQ URL; each probe used to sleep kombu's 2 s retry interval
    after the refusal, so the lab page took 8 s while RabbitMQ was down."""
    from teachlab.lab.runs.lanes import _status_cache, lane_status, lanes

    settings.RABBIT_URL = "amqp://guest:guest@127.0.0.1:1//"
    _status_cache.clear()
    began = time.monotonic()
    down = [lane.name for lane in lanes() if not lane_status(lane).available]
    took = time.monotonic() - began
    assert len(down) >= 4 and all(name.startswith("rabbit") for name in down)
    assert took < 1.5, f"{took:.1f} s to probe every lane"


def test_bad_input_gets_a_message_per_field_and_keeps_what_was_typed(client):
    response = client.post(
        "/lab/", {"lane": "redis-short", "countdown": "-5", "count": "many", "prediction": "7"}
    )
    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    assert "countdown cannot be less than 0; you gave -5." in page  # the schema's words
    assert "count must be a number; 'many' is not one." in page
    assert 'value="7"' in page
    assert not Run.objects.exists()


def test_countdown_and_eta_together_are_refused_with_a_reason(client):
    response = client.post(
        "/lab/",
        {"lane": "redis-short", "countdown": "5", "eta": "2030-01-01T10:00:00", "count": "1"},
    )
    assert response.status_code == 400
    assert "not both" in response.content.decode()


def test_a_run_above_the_task_limit_is_refused_with_the_limit_in_the_message(client, settings):
    settings.LAB_MAX_TASKS_PER_RUN = 5
    response = client.post("/lab/", {"lane": "redis-short", "countdown": "1", "count": "6"})
    assert response.status_code == 400
    assert "5" in response.content.decode()
    assert not Run.objects.exists()


def test_a_countdown_above_the_limit_is_refused(client, settings):
    settings.LAB_MAX_COUNTDOWN = 60
    response = client.post("/lab/", {"lane": "redis-short", "countdown": "61", "count": "1"})
    assert response.status_code == 400
    assert not Run.objects.exists()


def test_posting_without_a_csrf_token_is_refused(learner):
    client = Client(enforce_csrf_checks=True)
    session = client.session
    session[SESSION_KEY] = learner.key
    session.save()
    response = client.post("/lab/", {"lane": "redis-short", "countdown": "1", "count": "1"})
    assert response.status_code == 403
    assert not Run.objects.exists()


def test_the_owner_sees_a_finished_run_with_every_receipt(client, learner):
    run = _run(learner)
    page = client.get(f"/lab/runs/{run.id}/").content.decode()
    assert page.count('id="rc-task-a-') == 3
    assert "You predicted <strong>2</strong>" in page
    assert "Replay" in page


@pytest.mark.parametrize(
    "path",
    [
        "/lab/runs/{id}/",
        "/lab/runs/{id}/export.csv",
        "/lab/runs/{id}/export.json",
    ],
)
def test_another_learners_run_is_a_404_everywhere(path, learner):
    run = _run(learner)
    stranger = _client_for(Learner.objects.create())
    assert stranger.get(path.format(id=run.id)).status_code == 404
    assert stranger.get(path.format(id="no-such-run")).status_code == 404


def test_history_lists_only_the_learners_own_runs(client, learner):
    mine = _run(learner)
    theirs = _run(Learner.objects.create())
    page = client.get("/lab/runs/").content.decode()
    assert f"/lab/runs/{mine.id}/" in page
    assert theirs.id not in page
    assert "1 task, countdown 25 s" in page


def test_history_gives_amplification_only_for_runs_that_are_over(client, learner):
    # Three receipts and no execution yet: mid-run the ratio would read 0.00x, not a result.
    _run(learner)
    running = _run(learner)
    Run.objects.filter(pk=running.pk).update(status=Run.Status.RUNNING, settled_at=None)
    page = client.get("/lab/runs/").content.decode()
    rows = dict(re.findall(r'<tr>\s*<td><a href="/lab/runs/([^/]+)/"(.*?)</tr>', page, re.S))
    assert len(rows) == 2
    assert "after the run" in rows[running.id] and "×" not in rows[running.id]
    done = next(row for run_id, row in rows.items() if run_id != running.id)
    assert "0.00×" in done and "after the run" not in done


def test_worker_controls_are_hidden_and_refused_without_local_controls(client, settings):
    settings.LAB_LOCAL_CONTROLS = False
    settings.DEBUG = False
    page = client.get("/lab/").content.decode()
    assert "Warm shutdown" not in page
    for action in ("shutdown", "crash", "restart"):
        response = client.post(f"/lab/workers/redis-short-1/{action}/")
        assert response.status_code == 403
        assert "staff" in response.content.decode()
    assert client.get("/lab/workers/").status_code == 403


def test_staff_get_the_worker_controls(settings):
    settings.LAB_LOCAL_CONTROLS = False
    user = User.objects.create_user("teacher", password="a-long-password-9", is_staff=True)
    client = Client()
    client.force_login(user)
    page = client.get("/lab/").content.decode()
    assert 'id="workers"' in page


def test_worker_controls_are_rate_limited_with_a_message(settings):
    settings.LAB_LOCAL_CONTROLS = False
    settings.LAB_RUNS_PER_MINUTE = 1  # worker actions allow three times this per minute
    user = User.objects.create_user("busy-teacher", password="a-long-password-9", is_staff=True)
    client = Client()
    client.force_login(user)
    answers = [
        client.post("/lab/workers/no-such-worker/restart/", headers={"HX-Request": "true"})
        for _ in range(4)
    ]
    assert all(a.status_code == 200 for a in answers)  # htmx swaps the panel with the message
    assert "no lab worker called" in answers[0].content.decode()
    assert "more than 3" in answers[3].content.decode()


def test_an_eta_in_the_past_is_refused_with_a_reason(client):
    response = client.post(
        "/lab/", {"lane": "redis-short", "eta": "2020-01-01T10:00:00", "count": "1"}
    )
    assert response.status_code == 400
    assert "in the past" in response.content.decode()
    assert not Run.objects.exists()


def test_firing_at_an_unreachable_broker_says_how_to_get_it_and_stores_nothing(client, settings):
    settings.RABBIT_URL = "amqp://guest:guest@127.0.0.1:1//"
    settings.LAB_LOCAL_CONTROLS = True
    response = client.post("/lab/", {"lane": "rabbit-quorum", "countdown": "1", "count": "1"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "does not answer" in page and "rabbitmq-server" in page
    assert not Run.objects.exists()


def test_a_valid_form_fires_the_run_and_opens_its_page(client, learner):
    response = client.post(
        "/lab/",
        {"lane": "redis-short", "countdown": "0", "count": "2", "spacing": "1", "prediction": "2"},
    )
    run = Run.objects.get(learner=learner)
    assert response.status_code == 302
    assert response["Location"] == f"/lab/runs/{run.id}/"
    assert run.params["count"] == 2 and run.params["spacing"] == 1
    assert run.prediction == 2
    assert len(run.task_ids) == 2


def test_a_running_run_page_connects_its_socket_and_offers_no_replay(client, learner):
    run = _run(learner)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
    page = client.get(f"/lab/runs/{run.id}/").content.decode()
    assert 'hx-ext="ws"' in page
    assert f'ws-connect="/ws/lab/runs/{run.id}/"' in page
    assert "data-replay-speed" not in page
    assert "Inside Redis" in page


def test_a_finished_batch_run_draws_its_copies_per_task_charts(client, learner):
    batch = _run(learner)
    batch.params = {"count": 5, "countdown": 25}
    batch.task_ids = ["task-a", "t1", "t2", "t3", "t4"]
    batch.save()
    single = _run(learner)
    page = client.get(f"/lab/runs/{batch.id}/").content.decode()
    assert 'class="hist-bars"' in page  # drawn with the page, no second request
    assert 'class="hist-bars"' not in client.get(f"/lab/runs/{single.id}/").content.decode()
    charts_url = f"/lab/experiments/runs/{batch.id}/"
    fragment = client.get(charts_url, headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assert "<html" not in fragment.content.decode()


def test_firing_while_the_labs_own_redis_is_down_says_so_and_stores_nothing(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1"
    settings.LAB_LOCAL_CONTROLS = True
    response = client.post("/lab/", {"lane": "rabbit-quorum", "countdown": "1", "count": "1"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "The lab&#x27;s Redis does not answer" in page and "redis-server" in page
    assert not Run.objects.exists()


def test_with_redis_down_the_lab_page_and_workers_panel_open_and_say_why(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1"
    settings.LAB_LOCAL_CONTROLS = True
    home = client.get("/lab/")
    assert home.status_code == 200
    page = home.content.decode()
    assert "The lab&#x27;s Redis does not answer" in page and "Fire" in page
    panel = client.get("/lab/workers/")
    assert panel.status_code == 200 and "does not answer" in panel.content.decode()
    crash = client.post("/lab/workers/redis-short-1/crash/", headers={"HX-Request": "true"})
    assert crash.status_code == 200 and "does not answer" in crash.content.decode()


VERSIONS = {
    "redis": "7.0.15",
    "celery": "5.7.0",
    "kombu": "5.7.0",
    "amqp": "5.4.2",
    "redis-py": "8.1.0",
    "pool": "threads",
}


def test_the_run_page_and_its_json_name_the_versions_the_run_was_measured_on(client, learner):
    run = _run(learner, versions=VERSIONS)
    page = client.get(f"/lab/runs/{run.id}/").content.decode()
    assert "Ran on Redis 7.0.15 · celery 5.7.0 · kombu 5.7.0 · amqp 5.4.2 · redis-py 8.1.0" in page
    document = client.get(f"/lab/runs/{run.id}/export.json").json()
    assert document["versions"] == VERSIONS


def test_a_run_fired_with_no_worker_up_says_no_versions_were_reported(client, learner):
    run = _run(learner)
    page = client.get(f"/lab/runs/{run.id}/").content.decode()
    assert "No worker of this lane reported its versions" in page


def test_a_dying_child_is_refused_on_a_lane_without_pool_children(learner):
    from teachlab.lab.runs.errors import LabInputError
    from teachlab.lab.runs.firing import run_fire

    with pytest.raises(LabInputError, match="runs the threads pool.*Use a prefork lane"):
        run_fire(learner=learner, lane="redis-short", params={"die": 1}, check_limits=False)
    assert not Run.objects.exists()

"""The run page explains itself: from a run's stored events it states the timeouts that passed,
the copies ceil(wait / timeout) predicts and the copies seen, shows the Celery code for the
run's own parameters, draws copies per task for a batch, and the live pieces (counters, the
per-worker panel, the end-of-run frame) say the same."""

from __future__ import annotations

import re
import time

import pytest
from django.test import Client

from lessons.learners import SESSION_KEY
from lessons.models import Learner
from teachlab.lab.experiments.until import until_text
from teachlab.lab.live.fragments import render_batch_html
from teachlab.lab.live.panels import holders_html, holders_rows
from teachlab.lab.models import Run, RunEvent
from teachlab.lab.runs.reading import run_events, run_summary

pytestmark = pytest.mark.django_db


@pytest.fixture
def learner() -> Learner:
    return Learner.objects.create()


@pytest.fixture
def client(learner) -> Client:
    client = Client()
    session = client.session
    session[SESSION_KEY] = learner.key
    session.save()
    return client


def _stored_run(learner, *, lane="redis-short", vt=10.0, params, copies: list[list[float]], due):
    """A finished run whose task i was received at each time in copies[i] and every copy
    started at due[i] (seconds after firing), as the workers would have reported it."""
    now = time.time()
    fired = now - 60
    task_ids = [f"task-{i}" for i in range(len(copies))]
    run = Run.objects.create(
        learner=learner,
        lane=lane,
        params=params,
        task_ids=task_ids,
        visibility_timeout=vt,
        fired_at=fired,
        settled_at=now - 1,
        status=Run.Status.DONE,
    )
    seq = 0
    for i, (task_id, received) in enumerate(zip(task_ids, copies, strict=True)):
        for n, t in enumerate(received):
            for kind, at in (("received", t), ("started", due[i]), ("finished", due[i] + 0.01)):
                seq += 1
                RunEvent.objects.create(
                    run=run,
                    seq=seq,
                    kind=kind,
                    task_id=task_id,
                    index=i,
                    copy=n + 1,
                    worker=f"{lane}-{n % 2 + 1}@host",
                    redelivered=n > 0,
                    at=fired + at,
                    t=at,
                    eta=fired + due[i],
                    published_at=fired,
                )
    return run


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_explanation_states_timeouts_passed_copies_expected_and_seen(client, learner):
    # countdown 25 s on a 10 s timeout: two timeouts pass, ceil(25 / 10) = 3 copies.
    run = _stored_run(
        learner, params={"count": 1, "countdown": 25}, copies=[[0.04, 10.6, 20.6]], due=[25.0]
    )
    page = _text(client.get(f"/lab/runs/{run.id}/").content.decode())
    assert "What happened and why" in page
    assert "Receipts beyond the first of each task" in page  # each counter says what it counts
    assert "timeouts passed: 2" in page
    assert "copies expected: 3" in page and "copies seen: 3" in page
    assert "ceil(wait / 10) predicts 3 copies for the task" in page
    assert "Workers received 3, exactly what ceil(wait / 10) gives." in page
    assert "as predicted" not in page  # the formula's count is not the learner's prediction
    html = client.get(f"/lab/runs/{run.id}/").content.decode()
    assert 'href="/q/raise-visibility-timeout/solid/"' in html
    assert 'href="/lab/experiments/countdown-beyond-timeout/"' in html


def test_the_formula_is_never_called_the_prediction_beside_a_different_one(client, learner):
    run = _stored_run(
        learner, params={"count": 1, "countdown": 25}, copies=[[0.04, 10.6, 20.6]], due=[25.0]
    )
    run.prediction = 2
    run.save(update_fields=["prediction"])
    page = _text(client.get(f"/lab/runs/{run.id}/").content.decode())
    assert "You predicted 2 receipts" in page
    assert "exactly what ceil(wait / 10) gives; you predicted 2." in page
    assert "exactly as predicted" not in page


def test_a_batch_explanation_adds_up_each_tasks_copies_and_says_which_came_more_often(
    client, learner
):
    # due at 5, 15 and 25 s: ceil gives 1, 2 and 3 copies, 6 in all; task 2 came a fourth time.
    run = _stored_run(
        learner,
        params={"count": 3, "countdown": 5, "spacing": 10},
        copies=[[0.1], [0.1, 10.6], [0.1, 10.6, 20.6, 21.0]],
        due=[5.0, 15.0, 25.0],
    )
    page = _text(client.get(f"/lab/runs/{run.id}/").content.decode())
    assert "predicts 1–3 copies per task, 6 in all" in page
    assert "copies expected: 6" in page and "copies seen: 7" in page
    assert "1 task came more often than predicted" in page
    assert "timeouts passed: 2" in page


def test_the_celery_code_carries_the_runs_countdown_and_the_lanes_visibility_timeout(
    client, learner
):
    single = _stored_run(learner, params={"count": 1, "countdown": 25}, copies=[[0.1]], due=[25.0])
    code = _text(client.get(f"/lab/runs/{single.id}/").content.decode())
    assert '"visibility_timeout": 10,' in code.replace("&quot;", '"')
    assert "work.apply_async(args=[0], countdown=25)" in code
    batch = _stored_run(
        learner,
        lane="redis-long",
        vt=60,
        params={"count": 20, "countdown": 5, "spacing": 1.5, "acks_late": True, "duration": 2},
        copies=[[0.1]] * 20,
        due=[5 + 1.5 * i for i in range(20)],
    )
    code = _text(client.get(f"/lab/runs/{batch.id}/").content.decode()).replace("&quot;", '"')
    assert '"visibility_timeout": 60,' in code
    assert "for i in range(20): work.apply_async(args=[i], countdown=5 + 1.5 * i)" in code
    assert "@app.task(acks_late=True)" in code and "time.sleep(2)" in code


def test_a_finished_batch_draws_copies_per_task_and_receipts_over_time(client, learner):
    run = _stored_run(
        learner,
        params={"count": 3, "countdown": 5, "spacing": 10},
        copies=[[0.1], [0.1, 10.6], [0.1, 10.6, 20.6]],
        due=[5.0, 15.0, 25.0],
    )
    html = client.get(f"/lab/runs/{run.id}/").content.decode()
    bars = re.findall(
        r'<span class="hist-label">(\d+)×</span>.*?<span class="hist-n">(\d+) task', html
    )
    assert bars == [("1", "1"), ("2", "1"), ("3", "1")]
    assert "Tasks by how many copies workers received" in html
    assert "Receipts over time" in html and 'class="again"' in html  # redelivered copies drawn


def test_the_end_of_run_frame_brings_the_explanation_and_charts_and_keeps_data_at(learner):
    run = _stored_run(
        learner,
        params={"count": 2, "countdown": 15},
        copies=[[0.1, 10.6], [0.1, 10.6]],
        due=[15.0, 15.0],
    )
    events = run_events(run)
    summary = run_summary(run)
    frame = render_batch_html(events[-2:], done=summary, last="12-1", history=events)
    assert 'id="explain" hx-swap-oob="true"' in frame
    assert "ceil(wait / 10) predicts 2 copies per task, 4 in all" in _text(frame)
    assert 'id="run-charts" hx-swap-oob="true"' in frame
    assert "data-at=" in frame  # the outcome cells keep their timestamp for the benchmark
    assert 'data-counter="amplification">2.00×' in frame  # shown once the run is over


def test_amplification_waits_for_the_end_of_the_run_and_copies_show_when_they_ran(learner):
    run = _stored_run(
        learner, params={"count": 1, "countdown": 25}, copies=[[0.1, 10.6]], due=[25.0]
    )
    events = run_events(run)
    live = render_batch_html(events)
    assert "after the run" in live and "×" not in _text(live).split("Amplification")[1][:20]
    assert "executed at 25.00 s" in _text(live)
    # A body that started in an earlier batch still shows its start time when it ends.
    from teachlab.lab.live.fragments import picture_from

    picture = picture_from(events)
    finished = [e for e in events if e["kind"] == "finished"]
    assert "executed at 25.00 s" in _text(render_batch_html(finished, picture=picture))


def test_the_worker_panel_explains_why_workers_hold_more_copies_than_redis_lists():
    workers = [
        {"name": f"redis-short-{n}", "lane": "redis-short", "alive": True, "held_ids": ["t1"]}
        for n in (1, 2, 3)
    ] + [{"name": "redis-long-1", "lane": "redis-long", "alive": True, "held_ids": ["t1"]}]
    rows = holders_rows(workers, lane="redis-short", task_ids=frozenset({"t1"}))
    assert [m for _n, _a, m in rows] == [1, 1, 1]
    html = _text(holders_html(rows, unacked=1))
    assert "Redis still lists as unacked 1" in html
    assert "Why more copies are held than Redis lists" in html and "3 copies in workers" in html
    assert "Why more copies" not in holders_html(rows[:1], unacked=1)


def test_experiment_steps_read_in_plain_words():
    step = {"what": "executions", "per": "task", "at_least": 3, "within": 32, "run": "main"}
    assert until_text(step, own_run="main") == (
        "Watching until every task's body has run at least 3 times (up to 32 s)"
    )
    other = {"what": "executions", "at_least": 1, "within": 35, "run": "waiting"}
    assert until_text(other, own_run="long") == (
        "Watching until the body has run once in run “waiting” (up to 35 s)"
    )


def test_an_experiment_that_asks_when_refuses_a_prediction_without_a_timing(client):
    response = client.post("/lab/experiments/countdown-beyond-timeout/", {"prediction": "3"})
    assert response.status_code == 400
    assert "Say when you expect it to happen too" in response.content.decode()
    page = client.get("/lab/experiments/countdown-beyond-timeout/").content.decode()
    assert 'name="timing"' in page and "All together, when the 25 s countdown ends" in page


def test_a_rabbitmq_run_page_never_shows_an_unknown_visibility_timeout(client, learner):
    run = _stored_run(
        learner,
        lane="rabbit-quorum",
        vt=None,
        params={"count": 1, "countdown": 25},
        copies=[[0.04]],
        due=[25.0],
    )
    page = _text(client.get(f"/lab/runs/{run.id}/").content.decode())
    assert "(? s)" not in page and "visibility timeout (" not in page
    assert "this lane has no visibility timeout" in page

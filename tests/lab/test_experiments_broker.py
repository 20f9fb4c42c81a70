"""Every guided experiment, run through `manage.py lab experiment --all` against the private
test Redis, a RabbitMQ vhost of its own and real worker processes for every lane.

One session runs the whole set once (experiments on separate brokers overlap, so the twelve
take about five minutes); each experiment is then its own test with its failed checks spelled
out. Workers come from the lab's session fixture `lab_stack`.
Set TEACHLAB_EXPERIMENTS=slug,slug to run only some while working on them, and
TEACHLAB_EXPERIMENTS_OUT=FILE to keep the command's JSON (the values each check observed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.stack import BASE_DIR, STATE
from tests.stack import test_env as stack_env

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def _chosen() -> list[str]:
    from teachlab.lab.experiments.catalog import experiments_load

    only = [s for s in os.environ.get("TEACHLAB_EXPERIMENTS", "").split(",") if s]
    return only or [e.slug for e in experiments_load()]


@pytest.fixture(scope="session")
def experiment_results(lab_stack) -> dict[str, dict]:
    """Run the experiments once, the way CI and a developer would: through the command, with
    the lab's session workers (tests/lab/conftest.py) for every lane."""
    from teachlab.lab.experiments.catalog import experiments_load
    from teachlab.lab.runs.lanes import lane_get

    chosen = _chosen()
    lanes = {lane for e in experiments_load() if e.slug in chosen for lane in e.lanes}
    if any(not lane_get(lane).is_redis for lane in lanes):
        lab_stack.need_rabbit()
    args = ["--all"] if not os.environ.get("TEACHLAB_EXPERIMENTS") else chosen
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "manage.py", "lab", "experiment", *args, "--json"],
        cwd=BASE_DIR,
        env=stack_env(TEACHLAB_LOCAL_CONTROLS="1", **lab_stack.env),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    elapsed = time.monotonic() - started
    (STATE / "experiments.json").write_text(done.stdout)
    if os.environ.get("TEACHLAB_EXPERIMENTS_OUT"):  # keep the values observed, for a report
        Path(os.environ["TEACHLAB_EXPERIMENTS_OUT"]).write_text(done.stdout)
    try:
        results = json.loads(done.stdout)
    except ValueError:
        pytest.fail(
            f"lab experiment printed no JSON:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        )
    if isinstance(results, dict):
        results = [results]
    by_slug = {r["slug"]: r for r in results}
    by_slug["_meta"] = {"returncode": done.returncode, "seconds": elapsed}
    return by_slug


def _explain(result: dict) -> str:
    lines = [f"{result['slug']} failed:"]
    for check in result["checks"]:
        if not check["passed"]:
            lines.append(
                f"  [{check['run']}] {check['says']} expected {check['expected']}, "
                f"observed {check['observed']}"
            )
    lines += [f"  error: {e}" for e in result["errors"]]
    for name, run in result["runs"].items():
        lines.append(f"  run {name} {run['id']}: {run['report']}")
        lines += [f"    {t:>6}s {text}" for t, text in run["steps"]]
    return "\n".join(lines)


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("slug", _chosen())
def test_experiment_passes_its_checks_on_a_real_broker(experiment_results, slug):
    result = experiment_results.get(slug)
    assert result is not None, f"{slug} did not run"
    assert result["checks"], _explain(result)
    assert result["passed"], _explain(result)


@pytest.mark.timeout(1200)
def test_the_command_exits_zero_only_when_every_experiment_passed(experiment_results):
    results = [r for slug, r in experiment_results.items() if slug != "_meta"]
    meta = experiment_results["_meta"]
    assert (meta["returncode"] == 0) == all(r["passed"] for r in results)


@pytest.mark.timeout(1200)
def test_the_whole_set_runs_within_the_ci_budget(experiment_results):
    if os.environ.get("TEACHLAB_EXPERIMENTS"):
        pytest.skip("only a subset ran")
    assert experiment_results["_meta"]["seconds"] < 10 * 60


def _server_version(lane) -> str:
    """Asked of the broker here, not through teachlab.lab.worker.versions."""
    if lane.is_redis:
        import redis

        return redis.Redis.from_url(lane.broker_url).info("server")["redis_version"]
    from urllib.parse import urlsplit

    import amqp

    url = urlsplit(lane.broker_url)
    conn = amqp.Connection(
        f"{url.hostname}:{url.port or 5672}",
        userid=url.username,
        password=url.password,
        virtual_host=url.path[1:] or "/",
    )
    conn.connect()
    try:
        return conn.server_properties["version"]
    finally:
        conn.close()


@pytest.mark.timeout(1200)
def test_every_run_records_the_versions_its_lane_ran_on(experiment_results):
    from importlib.metadata import version

    from teachlab.lab.runs.lanes import lane_get

    libraries = {
        "celery": version("celery"),
        "kombu": version("kombu"),
        "amqp": version("amqp"),
        "redis-py": version("redis"),
    }
    servers = {}
    for slug, result in experiment_results.items():
        if slug == "_meta":
            continue
        for name, run in result["runs"].items():
            lane = lane_get(run["lane"])
            if lane.name not in servers:
                servers[lane.name] = _server_version(lane)
            got = run["versions"]
            assert {key: got.get(key) for key in libraries} == libraries, (slug, name)
            assert got["redis" if lane.is_redis else "rabbitmq"] == servers[lane.name]
            assert got["pool"] == lane.pool
            assert result["versions"][lane.name] == got


@pytest.mark.timeout(120)
def test_one_experiment_prints_its_checks_and_judges_the_prediction(lab_stack):
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "lab",
            "experiment",
            "expires-before-due",
            "--predict",
            "runs",
        ],
        cwd=BASE_DIR,
        env=stack_env(**lab_stack.env),
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  expires-before-due" in done.stdout
    assert "ok   [main] The body never ran." in done.stdout
    assert "your prediction runs did not match what happened: It is revoked" in done.stdout
    assert "1 of 1 experiments passed." in done.stdout


# --- the same experiments judged without the app's checks engine ----------------------------
# The expectation is computed here from the stored events (read through the ORM in a
# subprocess on the live database) and the task body's own tally in Redis (`lab:ran:<run>`,
# written by the body itself, apart from the event log), not through
# teachlab.lab.experiments.checks, so a fault in the engine cannot pass these too.

EVENTS = """
import json
from teachlab.lab.models import RunEvent
print(json.dumps(list(RunEvent.objects.filter(run_id={run_id!r}).values(
    "kind", "task_id", "index", "copy", "redelivered", "at", "eta"))))
"""


def _stored_events(run_id: str) -> list[dict]:
    from tests.stack import manage

    out = manage("shell", "-c", EVENTS.format(run_id=run_id)).stdout
    return json.loads(out.strip().splitlines()[-1])


def _body_ran(run_id: str) -> dict[int, int]:
    """The body's own count of executions per task index."""
    from teachlab.lab.runs.store import app_redis
    from teachlab.lab.worker.tasks import executions_key

    return {int(i): int(n) for i, n in app_redis().hgetall(executions_key(run_id)).items()}


def _run(experiment_results, slug: str, name: str) -> tuple[list[dict], dict[int, int]]:
    if slug not in _chosen():
        pytest.skip(f"{slug} was not among TEACHLAB_EXPERIMENTS")
    result = experiment_results.get(slug)
    assert result is not None and name in result["runs"], f"{slug} did not run {name}"
    run_id = result["runs"][name]["id"]
    return _stored_events(run_id), _body_ran(run_id)


def _of(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events if e["kind"] == kind]


@pytest.mark.timeout(1200)
def test_storm_independently_every_copy_was_received_again_and_ran_together_at_the_due_time(
    experiment_results,
):
    events, ran = _run(experiment_results, "countdown-beyond-timeout", "main")
    received = _of(events, "received")
    started = _of(events, "started")
    assert len({e["task_id"] for e in received}) == 1
    # 25 s countdown, 10 s visibility timeout: the first delivery and at least two restores.
    assert len(received) >= 3, received
    assert sorted(e["copy"] for e in received) == list(range(1, len(received) + 1))
    assert [e["redelivered"] for e in sorted(received, key=lambda e: e["copy"])][1:] == [True] * (
        len(received) - 1
    )
    # The body's own tally: every delivered copy did the work (no guard on this run).
    assert ran == {0: len(received)}, (ran, len(received))
    due = received[0]["eta"]
    starts = sorted(e["at"] for e in started)
    assert len(starts) == len(received)
    assert starts[0] >= due - 0.5 and starts[-1] <= due + 2, (due, starts)


@pytest.mark.timeout(1200)
def test_guard_independently_copies_arrive_but_the_body_works_once_and_a_retry_gets_through(
    experiment_results,
):
    events, ran = _run(experiment_results, "idempotency-guard", "duplicates")
    received = _of(events, "received")
    assert len(received) >= 3, received
    assert ran == {0: 1}, ran  # the body's own count: one copy did the work
    assert len(_of(events, "suppressed")) == len(_of(events, "started")) - 1 >= 2

    events, ran = _run(experiment_results, "idempotency-guard", "failure")
    assert ran == {0: 2}, ran  # the failing first attempt and the retry both reached the body
    assert _of(events, "suppressed") == []
    assert len(_of(events, "finished")) == 1
    assert len(_of(events, "failed")) == 1


@pytest.mark.timeout(1200)
def test_on_time_independently_one_delivery_one_execution_when_the_countdown_ends(
    experiment_results,
):
    events, ran = _run(experiment_results, "countdown-within-timeout", "main")
    received = _of(events, "received")
    started = _of(events, "started")
    assert len(received) == 1 and not received[0]["redelivered"], received
    assert ran == {0: 1}, ran
    assert len(started) == 1
    assert received[0]["eta"] - 0.5 <= started[0]["at"] <= received[0]["eta"] + 2

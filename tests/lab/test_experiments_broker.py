"""Every guided experiment, run through `manage.py lab experiment --all` against the private
test Redis, a RabbitMQ vhost of its own and real worker processes for every lane.

One session runs the whole set once (experiments on separate brokers overlap, so the twelve
take about five minutes); each experiment is then its own test with its failed checks spelled
out. Workers come from the lab's session fixture `lab_stack`.
Set TEACHLAB_EXPERIMENTS=slug,slug to run only some while working on them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

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
    from teachlab.lab.lanes import lane_get

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

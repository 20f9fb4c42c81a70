"""Every guided experiment, run through `manage.py lab experiment --all` against the private
test Redis, a RabbitMQ vhost of its own and real worker processes for every lane.

One session runs the whole set once (experiments on separate brokers overlap, so the twelve
take a few minutes); each experiment is then its own test with its failed checks spelled out.
Set TEACHLAB_EXPERIMENTS=slug,slug to run only some while working on them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from tests.stack import BASE_DIR, STATE, manage, missing
from tests.stack import test_env as stack_env

pytestmark = [pytest.mark.broker, pytest.mark.slow]

VHOST = f"teachlab-test-{os.getpid()}"


def _rabbitmqctl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["rabbitmqctl", "-q", *args], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture(scope="session")
def rabbit_url():
    """A vhost of our own on the system RabbitMQ, deleted afterwards."""
    try:
        made = _rabbitmqctl("add_vhost", VHOST)
    except (FileNotFoundError, subprocess.TimeoutExpired) as exc:
        missing(f"RabbitMQ is needed for the quorum lane (apt install rabbitmq-server): {exc}")
    if made.returncode != 0:
        missing(f"could not add a RabbitMQ vhost: {made.stderr.strip() or made.stdout.strip()}")
    _rabbitmqctl("set_permissions", "-p", VHOST, "guest", ".*", ".*", ".*")
    yield f"amqp://guest:guest@127.0.0.1:5672/{VHOST}"
    _rabbitmqctl("delete_vhost", VHOST)


class Supervisor:
    """Worker processes for every lane, started again when one exits (a crash is on purpose)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.children: dict[str, tuple[list[str], subprocess.Popen]] = {}
        self.stopping = threading.Event()
        self.logs = STATE / "experiment-workers"
        self.logs.mkdir(exist_ok=True)

    def _start(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115
        return subprocess.Popen(
            argv, cwd=BASE_DIR, env=self.env, stdout=log, stderr=subprocess.STDOUT
        )

    def start(self) -> Supervisor:
        from teachlab.lab.lanes import lanes, worker_argv, worker_name

        for lane in lanes():
            for number in range(1, lane.workers + 1):
                argv = worker_argv(lane, number)
                name = worker_name(lane, number)
                self.children[name] = (argv, self._start(name, argv))
        threading.Thread(target=self._watch, daemon=True).start()
        return self

    def _watch(self) -> None:
        while not self.stopping.wait(0.5):
            for name, (argv, proc) in list(self.children.items()):
                if proc.poll() is not None:
                    self.children[name] = (argv, self._start(name, argv))

    def stop(self) -> None:
        self.stopping.set()
        for _argv, proc in self.children.values():
            proc.terminate()
        for _argv, proc in self.children.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


def _all_alive(expected: int) -> bool:
    from teachlab.lab.workers import workers_list

    return sum(1 for w in workers_list() if w["alive"]) >= expected


@pytest.fixture(scope="session")
def lab_workers(rabbit_url):
    from teachlab.lab.lanes import lanes

    manage("migrate", "--noinput", "-v", "0")
    env = stack_env(TEACHLAB_RABBIT_URL=rabbit_url, TEACHLAB_LOCAL_CONTROLS="1")
    supervisor = Supervisor(env).start()
    expected = sum(lane.workers for lane in lanes())
    deadline = time.monotonic() + 90
    while not _all_alive(expected) and time.monotonic() < deadline:
        time.sleep(0.5)
    if not _all_alive(expected):
        supervisor.stop()
        pytest.fail(f"lab workers did not all start; logs in {supervisor.logs}", pytrace=False)
    yield env
    supervisor.stop()


def _chosen() -> list[str]:
    from teachlab.lab.experiments.catalog import experiments_load

    only = [s for s in os.environ.get("TEACHLAB_EXPERIMENTS", "").split(",") if s]
    return only or [e.slug for e in experiments_load()]


@pytest.fixture(scope="session")
def experiment_results(lab_workers) -> dict[str, dict]:
    """Run the experiments once, the way CI and a developer would: through the command."""
    chosen = _chosen()
    args = ["--all"] if not os.environ.get("TEACHLAB_EXPERIMENTS") else chosen
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "manage.py", "lab", "experiment", *args, "--json"],
        cwd=BASE_DIR,
        env=lab_workers,
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

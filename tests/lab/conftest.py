"""Lab fixtures: real worker processes for every lane on the private test Redis and a RabbitMQ
vhost of this session's own, started once per session and shared by every lab test.

Workers and the `lab` command (run as a subprocess) use the session's live database, the
same one the live server uses; in-process tests that only validate use pytest-django's `db`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import dataclass, field

import pytest

from tests.lab.workerpool import LabWorkers, RabbitVhost
from tests.stack import BASE_DIR, manage, missing, test_env


@dataclass
class LabStack:
    workers: LabWorkers
    rabbit: RabbitVhost
    env: dict[str, str] = field(default_factory=dict)

    def need_rabbit(self) -> None:
        if not self.rabbit.available:
            missing(f"RabbitMQ is needed for the rabbit-quorum lane: {self.rabbit.reason}")

    def lab(self, *args: str, timeout: float = 120, check: bool = True):
        """`manage.py lab ...` in a subprocess that sees the session's brokers and database."""
        return manage("lab", *args, timeout=timeout, check=check, **self.env)

    def lab_popen(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "manage.py", "lab", *args],
            cwd=BASE_DIR,
            env=test_env(**self.env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


@pytest.fixture(scope="session")
def lab_stack():
    """Migrated live database, a RabbitMQ vhost, and supervised workers for every lane."""
    from django.conf import settings

    from teachlab.lab.runs.lanes import lanes

    manage("migrate", "--noinput", "-v", "0")
    rabbit = RabbitVhost().create()
    env: dict[str, str] = {}
    old_rabbit_url = settings.RABBIT_URL
    if rabbit.available:
        env["TEACHLAB_RABBIT_URL"] = rabbit.url
        settings.RABBIT_URL = rabbit.url
    names = [lane.name for lane in lanes() if lane.is_redis or rabbit.available]
    workers = LabWorkers(names, env)
    try:
        workers.start(timeout=90)
        yield LabStack(workers=workers, rabbit=rabbit, env=env)
    finally:
        workers.stop()
        rabbit.delete()
        settings.RABBIT_URL = old_rabbit_url


def run_id_from(proc: subprocess.Popen) -> str:
    """The run id from `lab run`'s "run <id> on <lane>: ..." line on stderr (other lines, such
    as production mode's plain-HTTP warning, may come first)."""
    for line in proc.stderr:
        if line.startswith("run "):
            return line.split()[1]
    raise AssertionError(f"lab run printed no run line (exit {proc.wait()})")


def run_json(proc: subprocess.Popen, timeout: float = 150) -> dict:
    """The JSON summary a `lab run --json` subprocess printed, or a failure with its stderr."""
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, f"lab run failed ({proc.returncode}):\n{err}\n{out}"
    return json.loads(out)


@pytest.fixture(scope="session")
def fired_runs(lab_stack):
    """The issue's broker cases fired at once, in parallel across lanes, each by its own
    learner so the per-learner limits stay out of the way; then every summary."""
    cases = {
        "short25": ["--lane", "redis-short", "--countdown", "25"],
        "short5": ["--lane", "redis-short", "--countdown", "5"],
        "short25_guard": ["--lane", "redis-short", "--countdown", "25", "--guard"],
        "long25": ["--lane", "redis-long", "--countdown", "25"],
        "short_late": ["--lane", "redis-short", "--acks-late", "--duration", "22"],
        "short_fail_guard": [
            "--lane", "redis-short", "--countdown", "2", "--guard", "--fail", "1", "--retry",
        ],
        "short_expires": ["--lane", "redis-short", "--countdown", "6", "--expires", "3"],
    }  # fmt: skip
    if lab_stack.rabbit.available:
        cases["rabbit10"] = ["--lane", "rabbit-quorum", "--countdown", "10"]
    procs = {
        name: lab_stack.lab_popen("run", *args, "--json", "--learner", f"test-{name}")
        for name, args in cases.items()
    }
    watching = threading.Event()
    snapshots: list[dict] = []
    watcher = threading.Thread(target=_watch_broker, args=(snapshots, watching), daemon=True)
    watcher.start()
    results = {name: run_json(proc) for name, proc in procs.items()}
    watching.set()
    watcher.join(timeout=5)
    results["broker_snapshots"] = snapshots
    return results


def _watch_broker(snapshots: list[dict], stop: threading.Event) -> None:
    """What the broker panel would have shown of redis-short during the runs."""
    from teachlab.lab.eventlog.broker import BrokerWatcher

    watcher = BrokerWatcher("redis-short")
    while not stop.wait(0.25):
        snapshots.append(watcher.snapshot())


def only_task(summary: dict) -> dict:
    (row,) = summary["per_task"].values()
    return row

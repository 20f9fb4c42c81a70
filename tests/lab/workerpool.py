"""Real lab worker processes for tests, supervised like scripts/run does (an exited worker is
started again), plus the project's jobs worker (experiment attempts run there) and a RabbitMQ
vhost of the session's own.

Importable by any test package: `from tests.lab.workerpool import LabWorkers, rabbit_vhost`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.stack import BASE_DIR, STATE, test_env

RECORDER = "lab-recorder"
JOBS = "jobs"  # the project's own worker (teachlab/celery.py), not a lane: not in the registry


def _rabbitmqctl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["rabbitmqctl", "-q", *args], capture_output=True, text=True, timeout=60, check=False
    )


class RabbitVhost:
    """A vhost only this test session uses, deleted at the end; None-ish when RabbitMQ is
    missing (`reason` says why)."""

    def __init__(self, base_url: str = "amqp://guest:guest@127.0.0.1:5672") -> None:
        self.name = f"teachlab_test_{os.getpid()}"
        self.url = f"{base_url}/{self.name}"
        self.reason = ""
        self.created = False

    def create(self) -> RabbitVhost:
        if shutil.which("rabbitmqctl") is None:
            self.reason = "rabbitmqctl not found (apt install rabbitmq-server)"
            return self
        made = _rabbitmqctl("add_vhost", self.name)
        if made.returncode != 0:
            self.reason = f"could not add a RabbitMQ vhost: {made.stderr.strip() or made.stdout}"
            return self
        self.created = True
        perms = _rabbitmqctl("set_permissions", "-p", self.name, "guest", ".*", ".*", ".*")
        if perms.returncode != 0:
            self.reason = f"could not grant guest the vhost: {perms.stderr.strip()}"
        return self

    @property
    def available(self) -> bool:
        return self.created and not self.reason

    def delete(self) -> None:
        if self.created:
            _rabbitmqctl("delete_vhost", self.name)


class LabWorkers:
    """Worker processes for the given lanes, restarted when they exit (as scripts/run does)."""

    def __init__(
        self, lane_names: list[str], env: dict[str, str] | None = None, *, suffix: str = ""
    ) -> None:
        """`suffix` gives the workers names of their own ("redis-short-1-room"), so the lab's
        worker registry and controls never mistake them for the lab tests' workers."""
        from teachlab.lab.runs.lanes import lane_get, worker_argv, worker_name

        self.env = test_env(TEACHLAB_WORKER_LOGLEVEL="INFO", **(env or {}))
        self.specs: dict[str, list[str]] = {}
        self.unlisted = {RECORDER}
        for name in lane_names:
            lane = lane_get(name)
            for number in range(1, lane.workers + 1):
                worker = worker_name(lane, number) + suffix
                argv = worker_argv(lane, number)
                argv[argv.index("--name") + 1] = worker
                self.specs[worker] = argv
                if lane.plain:  # plain Celery: not in the lab's worker registry
                    self.unlisted.add(worker)
        # The recorder stores what the workers append to the runs' logs (one per stack).
        self.specs[RECORDER] = [sys.executable, str(BASE_DIR / "manage.py"), "lab", "record"]
        from teachlab.celery import jobs_worker_argv

        self.specs[JOBS] = jobs_worker_argv(f"jobs-{os.getpid()}")
        self.unlisted.add(JOBS)
        self.procs: dict[str, subprocess.Popen] = {}
        self.restarts: dict[str, int] = dict.fromkeys(self.specs, 0)
        self.stopping = threading.Event()
        self.logs = Path(STATE) / "workers"
        self.logs.mkdir(exist_ok=True)
        self._thread = threading.Thread(target=self._supervise, daemon=True)

    def _start(self, name: str) -> None:
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115
        self.procs[name] = subprocess.Popen(
            self.specs[name],
            cwd=BASE_DIR,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def start(self, *, timeout: float = 60) -> LabWorkers:
        for name in self.specs:
            self._start(name)
        self._thread.start()
        self.wait_alive([n for n in self.specs if n not in self.unlisted], timeout=timeout)
        self.wait_logged(JOBS, " ready.", timeout=timeout)
        return self

    def wait_logged(self, name: str, text: str, *, timeout: float = 60) -> None:
        """Until the process's log shows `text` (Celery logs "<name>@<host> ready.")."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log_tail(name, lines=200):
                return
            time.sleep(0.2)
        raise RuntimeError(f"{name} did not log {text!r} within {timeout}s: {self.log_tail(name)}")

    def _supervise(self) -> None:
        while not self.stopping.is_set():
            for name, proc in list(self.procs.items()):
                if proc.poll() is not None and not self.stopping.is_set():
                    self.restarts[name] += 1
                    self._start(name)
            self.stopping.wait(0.3)

    def wait_alive(self, names: list[str], *, timeout: float = 60) -> None:
        from teachlab.lab.worker.workers import workers_list

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            alive = {w["name"] for w in workers_list() if w["alive"]}
            if set(names) <= alive:
                return
            time.sleep(0.2)
        tails = {n: self.log_tail(n) for n in names}
        raise RuntimeError(f"lab workers not alive within {timeout}s: {tails}")

    def log_tail(self, name: str, lines: int = 15) -> str:
        path = self.logs / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        self.stopping.set()
        self._thread.join(timeout=5)
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 4  # the brokers die with the session: no need to wait
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)


def redis_short_workers(suffix: str) -> LabWorkers | None:
    """redis-short workers and a recorder for tests outside tests/lab (rooms, several web
    processes), not started yet; None when the lab tests' session workers are alive already
    (tests/lab ran first) and serve as well."""
    from teachlab.lab.worker.workers import workers_list

    if any(w["alive"] and w["lane"] == "redis-short" for w in workers_list()):
        return None
    return LabWorkers(["redis-short"], suffix=suffix)

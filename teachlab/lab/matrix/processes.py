"""The processes a matrix combination runs on: its lane workers (its own virtualenv) and the
project's recorder, supervised and restarted when they exit, and what their exits say."""

from __future__ import annotations

import re
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from teachlab.core.devstack import Child
from teachlab.lab.experiments.catalog import Experiment
from teachlab.lab.matrix.envs import EnvFailed
from teachlab.lab.runs.lanes import lane_get, worker_name
from teachlab.lab.worker.workers import workers_list

READY_WITHIN = 90.0  # seconds for a combination's workers to report in (first imports are slow)
GIVE_UP_AFTER = 3  # restarts of one worker before its combination is judged unable to start


class WorkersFailed(EnvFailed):
    """The combination's workers exit as soon as they start: a finding about the versions
    (kombu 5.7 on Redis 6.0.9), stored like a verdict, not a runner failure."""


def crash_reason(log: Path) -> str:
    """The worker's own words for why it stopped: its last critical line and exception."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    critical = [line.split(": ", 1)[-1] for line in lines if " CRITICAL " in line]
    errors = [line for line in lines if re.match(r"^[\w.]+(Error|Exception)\b.*:", line)]
    found = [*critical[-1:], *errors[-1:]]
    return "; ".join(found) or (lines[-1] if lines else "no log")


@dataclass
class Supervised:
    """Children restarted when they exit (an experiment's crash step kills workers)."""

    children: list[Child] = field(default_factory=list)
    lane_of: dict[str, str] = field(default_factory=dict)  # child name -> its lane
    kill: bool = True  # workers are killed (their broker goes next); the recorder stops warmly
    stopping: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Supervised:
        for child in self.children:
            child.logs.mkdir(parents=True, exist_ok=True)
            child.start()
        threading.Thread(target=self._watch, daemon=True, name="matrix-supervisor").start()
        return self

    def _watch(self) -> None:
        while not self.stopping.wait(0.3):
            for child in self.children:
                if child.proc is not None and child.proc.poll() is not None:
                    child.restarts += 1
                    child.start()

    def stop(self) -> None:
        self.stopping.set()
        for child in self.children:
            if child.proc is not None and child.proc.poll() is None:
                child.proc.send_signal(signal.SIGKILL if self.kill else signal.SIGTERM)
        for child in self.children:
            if child.proc is not None:
                try:
                    child.proc.wait(timeout=15)
                except Exception:  # noqa: BLE001 - a recorder slow to stop is killed
                    child.proc.kill()


def child_env(broker_url: str, noeviction_url: str = "") -> dict[str, str]:
    return {
        "TEACHLAB_LAB_BROKER_REDIS_URL": broker_url,
        **({"TEACHLAB_LAB_NOEVICTION_REDIS_URL": noeviction_url} if noeviction_url else {}),
        "TEACHLAB_REDIS_DB_APP": str(settings.LAB_MATRIX_DB_APP),
        "DJANGO_SETTINGS_MODULE": "teachlab.settings",
    }


def recorder(logs: Path) -> Supervised:
    """The project's own recorder, on the matrix's app database."""
    argv = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "lab", "record"]
    child = Child("matrix-recorder", argv, child_env(""), logs=logs)
    return Supervised([child], kill=False).start()


def lane_workers(*, python: Path, lanes: list[str], env: dict, logs: Path) -> Supervised:
    children, lane_of = [], {}
    for name in lanes:
        lane = lane_get(name)
        for number in range(1, lane.workers + 1):
            worker = worker_name(lane, number)
            argv = [
                str(python),
                "-m",
                "teachlab.lab.worker.celery_app",
                "--lane",
                name,
                "--name",
                worker,
            ]
            children.append(Child(worker, argv, env, logs=logs))
            lane_of[worker] = name
    return Supervised(children, lane_of=lane_of).start()


def lanes_exited(supervised: Supervised | None, lanes) -> str:
    """How the workers of these lanes exited, in their own words ("" when none did): an
    experiment's record names its own lanes' failures, not the first lane that gave up."""
    found = []
    for child in supervised.children if supervised else []:
        if supervised.lane_of.get(child.name) not in lanes:
            continue
        exits = child.restarts + (child.proc is not None and child.proc.poll() is not None)
        if exits:
            reason = crash_reason(child.logs / f"{child.name}.log")
            found.append(f"{child.name} exited {exits} times: {reason}")
    return "; ".join(found)


def own_reason(supervised: Supervised | None, experiment: Experiment, first: str) -> str:
    """Why the experiment's combination could not start its workers, by its own lanes."""
    own = lanes_exited(supervised, experiment.lanes)
    return own or f"{first} (another lane's worker; {', '.join(experiment.lanes)} had not exited)"


def workers_ready(lanes: list[str], supervised: Supervised, *, timeout: float) -> dict:
    """The versions each lane's workers reported, once every worker is alive."""
    deadline = time.monotonic() + timeout
    while True:
        alive = [w for w in workers_list() if w["alive"] and w["lane"] in lanes]
        found = {lane: [w for w in alive if w["lane"] == lane] for lane in lanes}
        if all(len(found[lane]) >= lane_get(lane).workers for lane in lanes):
            return {lane: found[lane][0]["versions"] for lane in lanes}
        for child in supervised.children:
            if child.restarts >= GIVE_UP_AFTER:
                reason = crash_reason(child.logs / f"{child.name}.log")
                raise WorkersFailed(f"{child.name} exited {child.restarts + 1} times: {reason}")
        if time.monotonic() > deadline:
            tails = []
            for child in supervised.children:
                log = child.logs / f"{child.name}.log"
                text = log.read_text(errors="replace")[-600:] if log.exists() else ""
                tails.append(f"{child.name}: {text.strip()}")
            raise EnvFailed(f"workers not alive within {timeout:.0f} s; " + " | ".join(tails))
        time.sleep(0.3)

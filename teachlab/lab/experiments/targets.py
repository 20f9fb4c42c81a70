"""The worker a step acts on: the one holding the run's task, or any alive one of the lane."""

from __future__ import annotations

import time

from teachlab.core.dbthreads import connection_release
from teachlab.lab.eventlog.settle import copies_pending
from teachlab.lab.experiments.playing import ExperimentRun, StepFailed
from teachlab.lab.models import Run
from teachlab.lab.runs.lanes import lane_get
from teachlab.lab.worker.workers import (
    worker_control,
    worker_disconnect,
    worker_holding,
    worker_stop,
    workers_list,
)

READY_WITHIN = 45.0  # seconds a lane may take to have all its workers back


def _alive(lane: str) -> list[dict]:
    return [w for w in workers_list() if w["lane"] == lane and w["alive"]]


def _holder(*, run: Run) -> str | None:
    """The alive worker holding one of the run's deliveries right now. A worker just killed
    still lists its deliveries (its last heartbeat) and its copy stays pending: never it."""
    lane = lane_get(run.lane)
    alive = {w["name"] for w in _alive(lane.name)}
    for task_id in run.task_ids:
        name = worker_holding(task_id=task_id, lane=lane.name)
        if name in alive:
            return name
    pending = {
        hostname.split("@", 1)[0]: n
        for hostname, n in copies_pending(run).items()
        if hostname.split("@", 1)[0] in alive
    }
    if pending:
        return max(pending, key=pending.get)
    return None


def target_worker(*, state: ExperimentRun, action: str, target: str) -> str:
    lane = state.spec["lane"]
    if target == "holder" and state.run is not None:
        name = _holder(run=state.run)
        if name is None:
            raise StepFailed(f"no worker of {lane} held the run's task, so nothing to {action}")
    else:
        alive = _alive(lane)
        if not alive:
            raise StepFailed(f"no worker of {lane} is alive to {action}")
        name = alive[0]["name"]
    return name


def worker_act(
    *, state: ExperimentRun, action: str, target: str, grace: float | None = None
) -> str:
    """Crash, stop or disconnect the target worker; its name, for the step log."""
    name = target_worker(state=state, action=action, target=target)
    if grace is not None:
        worker_stop(name=name, grace=grace)
    elif action == "disconnect":
        worker_disconnect(name=name)
    else:
        worker_control(name=name, action=action)
    return name


def lane_ready(*, lane: str, within: float = READY_WITHIN) -> bool:
    """Wait until every worker the lane should have is alive (the supervisor restarts them)."""
    wanted = lane_get(lane).workers
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        alive = _alive(lane)
        if len(alive) >= wanted and all(w.get("state") == "running" for w in alive):
            return True
        connection_release()
        time.sleep(0.5)
    return False

"""`lab fidelity`: the same paced batch on redis-short through the lab, then on the plain-Celery
control lane, back to back. The ratio of their amplifications says whether the lab's own
instrumentation changed what the broker did (BROKER-FACTS 12)."""

from __future__ import annotations

import time

from teachlab.lab.runs.errors import LabError
from teachlab.lab.worker.control import control_fire, control_wait, fidelity_ratio

LANE = "redis-short"


def _side(tasks: int, executions: int) -> dict:
    return {
        "tasks": tasks,
        "executions": executions,
        "amplification": round(executions / tasks, 3) if tasks else 0.0,
    }


def _lab_side(*, learner, count: int, countdown: float, spacing: float, progress) -> dict:
    from teachlab.lab.eventlog.settle import run_settle
    from teachlab.lab.models import Run
    from teachlab.lab.runs.firing import run_fire
    from teachlab.lab.runs.reading import run_summary
    from teachlab.lab.runs.store import app_redis
    from teachlab.lab.worker.heartbeat import STATS_EVERY
    from teachlab.lab.worker.workers import BEAT, control_key, workers_list

    for worker in workers_list():  # handler times of this batch only
        if worker["lane"] == LANE and worker["alive"]:
            app_redis().rpush(control_key(worker["name"]), "stats-reset")
    run = run_fire(
        learner=learner,
        lane=LANE,
        params={"count": count, "countdown": countdown, "spacing": spacing},
        label="fidelity",
        check_limits=False,
    )
    progress.write(f"lab: run {run.id}, {count} tasks on {LANE}\n")
    while run.status == Run.Status.RUNNING:
        time.sleep(1)
        run.refresh_from_db()
        run_settle(run)
    summary = run_summary(run)
    time.sleep(STATS_EVERY + 2 * BEAT)  # the heartbeats carry figures that include the end
    handlers = {}
    for worker in workers_list():
        if worker["lane"] == LANE and worker["alive"]:
            handlers[worker["name"]] = worker["handler_ms"]
            progress.write(f"lab: {worker['name']} signal handlers, ms: {worker['handler_ms']}\n")
    if run.status != Run.Status.DONE:
        raise LabError(f"The lab run {run.id} ended {run.status}; is the recorder running?")
    return _side(count, summary["executions"]), handlers


def fidelity_measure(*, count: int, countdown: float, spacing: float, learner, progress) -> dict:
    """{"lab": {tasks, executions, amplification}, "control": {...}, "ratio", "handler_ms"}."""
    if count < 1:
        raise LabError("--count must be at least 1.")
    lab, handlers = _lab_side(
        learner=learner, count=count, countdown=countdown, spacing=spacing, progress=progress
    )
    batch, fired = control_fire(count=count, countdown=countdown, spacing=spacing)
    last_due = fired + countdown + spacing * (count - 1)
    progress.write(f"control: batch {batch}, {count} tasks on the control lane\n")
    executions = control_wait(
        batch=batch, count=count, last_due=last_due, timeout=last_due - time.time() + 120
    )
    if executions < count:
        raise LabError(
            f"The control lane ran {executions} of {count} tasks: are its workers running "
            "(scripts/run starts them; or python -m teachlab.lab.worker.control --name redis-control-1)?"
        )
    control = _side(count, executions)
    return {
        "lab": lab,
        "control": control,
        "ratio": fidelity_ratio(lab["executions"], control["executions"]),
        "handler_ms": handlers,  # per redis-short worker: this batch's signal handler times
    }


FIDELITY_GOAL = "lab / control amplification within 0.95–1.05, three runs in a row"
HANDLER_GOAL = "signal handler p99 ≤ 1 ms per delivery, measured in the worker"


def fidelity_results(result: dict) -> dict[str, dict]:
    """A fidelity_measure() result as the figures of two measurements, each with its own goal:
    {"lab-fidelity": ..., "handler-overhead": ...}; per-worker figures are lists in the
    workers' name order; the counts and the handler times in full go under "detail"."""
    workers = [stats for _, stats in sorted(result["handler_ms"].items())]

    def p99(part: str, which: str) -> list:
        found = [(w if part == "all" else w.get("received", {})).get(which) for w in workers]
        return [f["p99"] if f else None for f in found]

    handlers = {
        "received_cpu_p99_ms": p99("received", "cpu"),
        "received_wall_p99_ms": p99("received", "wall"),
        "all_cpu_p99_ms": p99("all", "cpu"),
        "all_wall_p99_ms": p99("all", "wall"),
        "detail": {"workers": len(workers), "handler_ms": result["handler_ms"]},
    }
    fidelity = {
        "ratio": result["ratio"],
        "lab_amplification": result["lab"]["amplification"],
        "control_amplification": result["control"]["amplification"],
        "detail": {
            "lab_executions": result["lab"]["executions"],
            "control_executions": result["control"]["executions"],
            "tasks": result["lab"]["tasks"],
        },
    }
    return {"lab-fidelity": fidelity, "handler-overhead": handlers}

"""Settling a run: telling when every delivery has ended, marking the run done or timed out,
and announcing its end once through its log. The monitor settles every running run each
second; `lab run` and experiments settle the ones they follow.

The end is decided from the run's log reduced by the same RunState the live readers hold
(runlog.py), not from the database: a recorder that is behind (3 of 349 runs of a 300-client
soak were not settled within 60 s while settling waited for it) no longer holds a run open."""

from __future__ import annotations

import logging
import time

from django.dispatch import Signal

from teachlab.lab.eventlog.runlog import log_state
from teachlab.lab.eventlog.runstate import RunState
from teachlab.lab.eventlog.stream import done_append
from teachlab.lab.models import SETTLING_KINDS, Kind, Run
from teachlab.lab.runs.reading import state_summary
from teachlab.lab.runs.store import app_redis
from teachlab.lab.worker.workers import workers_list

log = logging.getLogger(__name__)
# Sent once per run, by whichever process marked it done or timed out (usually the monitor),
# with `run` and its `summary`: lets other apps store what the run showed (workshop rooms
# store their outcome) without the lab knowing them. Receivers' errors are logged, not raised.
run_settled = Signal()


def _holder_gone(hostname: str, since: float, registry: dict[str, dict]) -> bool:
    """The worker that received a delivery at `since` has died or been restarted since."""
    record = registry.get(hostname)
    if record is None:
        return True
    return not record["alive"] or float(record.get("started_at") or 0) > since


def run_is_done(run: Run, state: RunState | None = None) -> bool:
    """The run's state says every delivery has ended (RunState.ended); a delivery whose holder
    may have died is judged against the worker registry, read only then."""
    if run.status == Run.Status.FAILED:
        return True
    state = state if state is not None else log_state(run)
    registry: dict[str, dict] | None = None

    def holder_gone(worker: str, since: float) -> bool:
        nonlocal registry
        if registry is None:
            registry = {w["hostname"]: w for w in workers_list()}
        return _holder_gone(worker, since, registry)

    return state.ended(holder_gone)


def _surely_running(run: Run) -> bool:
    """A cheap look at the live counters (one Redis read) before reading every event: a run
    cannot be done while fewer tasks have arrived, or fewer copies settled, than it has."""
    try:
        raw = app_redis().hgetall(f"lab:run:{run.id}:counts")
    except Exception:  # noqa: BLE001 - without Redis, the database decides
        return False
    if not raw:
        return False
    tasks = len(run.task_ids)
    settled = sum(int(raw.get(kind) or 0) for kind in SETTLING_KINDS)
    if int(raw.get("first") or 0) < tasks or settled < tasks:
        return True
    # A delivery not settled yet, and every worker of the lane has lived through the whole
    # run: none died holding it, so it will report. Without this the monitor read every
    # event of a big batch each second for its last half (docs/measurements/history/lab.md).
    if settled < int(raw.get(Kind.RECEIVED) or 0):
        try:
            ours = [w for w in workers_list() if w["lane"] == run.lane]
        except Exception:  # noqa: BLE001 - without the registry, the database decides
            return False
        started = [float(w.get("started_at") or 0) for w in ours]
        return bool(ours) and all(w["alive"] for w in ours) and max(started) < run.fired_at
    return False


def run_settle(run: Run) -> Run:
    """Mark a running run done (or timed out past its deadline) and tell its watchers once."""
    if run.status != Run.Status.RUNNING:
        return run
    past_deadline = run.deadline is not None and time.time() > run.deadline
    if not past_deadline and _surely_running(run):
        return run
    state = log_state(run)
    if run_is_done(run, state):
        run.status, run.settled_at = Run.Status.DONE, state.last_at or time.time()
    elif past_deadline:
        run.status, run.settled_at = Run.Status.TIMED_OUT, time.time()
    else:
        return run
    updated = Run.objects.filter(id=run.id, status=Run.Status.RUNNING).update(
        status=run.status, settled_at=run.settled_at
    )
    if updated:
        summary = None
        try:
            summary = state_summary(run, state)
            # Watchers learn of the end through the run's log, after its last event.
            done_append(run_id=run.id, summary=summary)
        except Exception:
            log.exception("could not announce the end of run %s", run.id)
        if summary is None:
            return run
        for receiver, result in run_settled.send_robust(sender=Run, run=run, summary=summary):
            if isinstance(result, Exception):
                log.error("run %s settled; %r failed: %r", run.id, receiver, result)
    return run


def runs_settle_all() -> int:
    """Settle every running run (the monitor calls this); returns how many are still running."""
    still = 0
    for run in Run.objects.running():
        if run_settle(run).status == Run.Status.RUNNING:
            still += 1
    return still


def copies_pending(run: Run) -> dict[str, int]:
    """Deliveries received and not settled, per worker (who holds what, for experiments)."""
    return log_state(run).pending_by_worker()

"""Settling a run: telling when every delivery has ended, marking the run done or timed out,
and announcing its end once through its log. The monitor settles every running run each
second; `lab run` and experiments settle the ones they follow."""

from __future__ import annotations

import logging
import time
from collections import defaultdict

from django.dispatch import Signal

from teachlab.lab.models import SETTLING_KINDS, Kind, Run
from teachlab.lab.reading import run_summary
from teachlab.lab.stream import done_append

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


def run_is_done(run: Run) -> bool:
    """Every task received and every delivery settled: finished, suppressed, revoked, failed
    with no retry coming, or requeued by a warm shutdown (a later copy then settles it).

    A delivery held by a crashed worker never reports; once a later copy of that task has
    arrived it is counted as lost. Until then the run stays open, as the broker still owes
    the learner that copy."""
    if run.status == Run.Status.FAILED:
        return True
    copies: dict[str, dict[int, list]] = defaultdict(dict)  # task -> copy -> [worker, at, settled]
    more_coming: dict[str, bool] = {}
    rows = run.events.order_by("seq").values_list("task_id", "copy", "kind", "worker", "at", "data")
    for task_id, copy, kind, worker, at, data in rows:
        if kind == Kind.RECEIVED:
            copies[task_id][copy] = [worker, at, False]
        elif kind in SETTLING_KINDS:
            if copy in copies[task_id]:
                copies[task_id][copy][2] = True
            more_coming[task_id] = kind == Kind.REQUEUED or (
                kind == Kind.FAILED and bool((data or {}).get("retrying"))
            )
    registry = None
    for task_id in run.task_ids:
        task_copies = copies.get(task_id)
        if not task_copies or more_coming.get(task_id):
            return False
        latest = max(task_copies)
        for copy, (worker, at, settled) in task_copies.items():
            if settled:
                continue
            if copy == latest:
                return False
            if registry is None:
                from teachlab.lab.workers import workers_list

                registry = {w["hostname"]: w for w in workers_list()}
            if not _holder_gone(worker, at, registry):
                return False
    return True


def _surely_running(run: Run) -> bool:
    """A cheap look at the live counters (one Redis read) before reading every event: a run
    cannot be done while fewer tasks have arrived, or fewer copies settled, than it has."""
    from teachlab.lab.store import app_redis

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
        from teachlab.lab.workers import workers_list

        try:
            ours = [w for w in workers_list() if w["lane"] == run.lane]
        except Exception:  # noqa: BLE001 - without the registry, the database decides
            return False
        started = [float(w.get("started_at") or 0) for w in ours]
        return bool(ours) and all(w["alive"] for w in ours) and max(started) < run.fired_at
    return False


def _all_stored(run: Run) -> bool:
    """Every event numbered so far is in the database (seqs run 1..N without gaps)."""
    from teachlab.lab.store import app_redis

    try:
        issued = int(app_redis().get(f"lab:run:{run.id}:seq") or 0)
    except Exception:  # noqa: BLE001 - without Redis, the database decides
        return True
    return run.events.count() >= issued


def run_settle(run: Run) -> Run:
    """Mark a running run done (or timed out past its deadline) and tell its watchers once."""
    if run.status != Run.Status.RUNNING:
        return run
    past_deadline = run.deadline is not None and time.time() > run.deadline
    if not past_deadline and _surely_running(run):
        return run
    if not past_deadline and not _all_stored(run):
        return run  # the recorder has not stored every event the log holds yet
    if run_is_done(run):
        last = run.events.order_by("-seq").values_list("at", flat=True).first()
        run.status, run.settled_at = Run.Status.DONE, last or time.time()
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
            summary = run_summary(run)
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
    open_: dict[tuple[str, int], str] = {}
    for task_id, copy, kind, worker in run.events.values_list("task_id", "copy", "kind", "worker"):
        if kind == Kind.RECEIVED:
            open_[(task_id, copy)] = worker
        elif kind in SETTLING_KINDS:
            open_.pop((task_id, copy), None)
    held: dict[str, int] = defaultdict(int)
    for worker in open_.values():
        held[worker] += 1
    return dict(held)

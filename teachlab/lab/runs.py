"""Lab runs: fire one, read its events, summarise it, tell when it has settled.

Views, consumers, experiments, workshop rooms and the `lab` command all call these, so a run
fired from the browser and one fired from the shell behave the same.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from django.db.models import Count

from teachlab.lab import limits
from teachlab.lab.errors import LabInputError, LaneUnavailable
from teachlab.lab.events import counts_view, run_group
from teachlab.lab.lanes import Lane, lane_get, lane_status
from teachlab.lab.models import Run, RunEvent
from teachlab.lab.stream import done_append
from teachlab.lab.tasks import TASK_EARLY, TASK_LATE

log = logging.getLogger(__name__)

__all__ = [
    "RunParams",
    "params_parse",
    "run_events",
    "run_fire",
    "run_for_learner",
    "run_group",
    "run_is_done",
    "run_settle",
    "run_summary",
    "runs_for_learner",
]

SANE_SECONDS = 7 * 24 * 3600  # beyond any limit a server would set: a typo, not a choice
MAX_DURATION = 600
SETTLED_KINDS = {"finished", "suppressed", "revoked", "failed", "requeued"}


@dataclass(frozen=True)
class RunParams:
    count: int = 1
    countdown: float = 0.0
    eta: float | None = None  # epoch seconds; instead of countdown
    spacing: float = 0.0
    expires: float | None = None
    duration: float = 0.0
    acks_late: bool = False
    guard: bool = False
    guard_ttl: int = 600
    fail: int = 0
    retry: bool = False
    retry_delay: float = 1.0

    def due_in(self, index: int, *, now: float) -> float:
        """Seconds from `now` until task `index` is due."""
        first = (self.eta - now) if self.eta is not None else self.countdown
        return max(0.0, first) + index * self.spacing

    def as_dict(self) -> dict:
        return asdict(self)


# --- parsing ----------------------------------------------------------------------------------


def _blank(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _number(raw: dict, key: str, default, *, low=0.0, high=SANE_SECONDS, integer=False):
    value = raw.get(key)
    if _blank(value):
        return default
    if isinstance(value, bool):
        raise LabInputError(f"{key} must be a number, not {value}.")
    try:
        number = float(str(value).strip()) if not isinstance(value, int | float) else float(value)
    except ValueError:
        raise LabInputError(f"{key} must be a number; {value!r} is not one.") from None
    if not math.isfinite(number):
        raise LabInputError(f"{key} must be a finite number.")
    if integer and number != int(number):
        raise LabInputError(f"{key} must be a whole number; {value!r} is not.")
    if number < low:
        raise LabInputError(f"{key} cannot be less than {low:g}; you gave {number:g}.")
    if number > high:
        raise LabInputError(
            f"{key} of {number:g} is far beyond anything the lab can run (at most {high:g})."
        )
    return int(number) if integer else number


def _flag(raw: dict, key: str) -> bool:
    value = raw.get(key)
    if isinstance(value, bool):
        return value
    if _blank(value):
        return False
    text = str(value).strip().lower()
    if text in {"1", "true", "on", "yes"}:
        return True
    if text in {"0", "false", "off", "no"}:
        return False
    raise LabInputError(f"{key} must be on or off; {value!r} is neither.")


def _eta(value, *, now: float) -> float | None:
    if _blank(value):
        return None
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        epoch = moment.timestamp()
    elif isinstance(value, int | float) and not isinstance(value, bool):
        epoch = float(value)
    else:
        try:
            moment = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            raise LabInputError(
                f"eta must be a date and time such as 2026-12-02T10:30:00Z; {value!r} is not."
            ) from None
        epoch = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    if epoch < now - 60:
        raise LabInputError("eta is in the past; pick a moment after now.")
    if epoch > now + SANE_SECONDS:
        raise LabInputError("eta is more than a week away; the lab cannot wait that long.")
    return epoch


KNOWN = set(RunParams.__dataclass_fields__)


def params_parse(raw: dict, *, now: float | None = None) -> RunParams:
    """Form fields, JSON or CLI options to RunParams; a LabInputError names the bad field."""
    now = time.time() if now is None else now
    unknown = sorted(set(raw) - KNOWN)
    if unknown:
        raise LabInputError(f"Unknown run parameter(s): {', '.join(unknown)}.")
    count = _number(raw, "count", 1, low=1, high=1_000_000, integer=True)
    countdown = _number(raw, "countdown", 0.0)
    eta = _eta(raw.get("eta"), now=now)
    if eta is not None and not _blank(raw.get("countdown")) and countdown:
        raise LabInputError("Give a countdown or an eta, not both.")
    expires = _number(raw, "expires", None, low=0.001)
    fail = _number(raw, "fail", 0, high=20, integer=True)
    retry = _flag(raw, "retry")
    if retry and not fail:
        raise LabInputError("retry only matters with fail: set how many times the body fails.")
    return RunParams(
        count=count,
        countdown=countdown,
        eta=eta,
        spacing=_number(raw, "spacing", 0.0, high=24 * 3600),
        expires=expires,
        duration=_number(raw, "duration", 0.0, high=MAX_DURATION),
        acks_late=_flag(raw, "acks_late"),
        guard=_flag(raw, "guard"),
        guard_ttl=_number(raw, "guard_ttl", 600, low=1, high=7 * 24 * 3600, integer=True),
        fail=fail,
        retry=retry,
        retry_delay=_number(raw, "retry_delay", 1.0, high=3600),
    )


def _prediction(value) -> int | None:
    if _blank(value):
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        raise LabInputError(
            f"A prediction is a whole number of receipts; {value!r} is not."
        ) from None
    if not 0 <= number <= 10_000_000:
        raise LabInputError("A prediction must be between 0 and 10,000,000 receipts.")
    return number


# --- firing -------------------------------------------------------------------------------------


def _active_runs(learner) -> int:
    active = 0
    for run in Run.objects.owned_by(learner).running():
        if run_settle(run).status == Run.Status.RUNNING:
            active += 1
    return active


def _deadline(p: RunParams, lane: Lane, *, now: float) -> float:
    last_due = p.due_in(p.count - 1, now=now)
    attempts = p.fail + 1 if p.retry else 1
    body = attempts * (p.duration + p.retry_delay)
    return now + last_due + body + 2 * (lane.visibility_timeout or 0) + 60


def run_fire(
    *,
    learner,
    lane: str | Lane,
    params: dict | RunParams,
    prediction=None,
    label: str = "",
    check_limits: bool = True,
) -> Run:
    """Validate, check the learner's limits, store the run, publish its tasks.

    Raises LabInputError, LabLimitError or LaneUnavailable with a message for the learner.
    If the broker goes away halfway, the run is kept as `failed` with how many tasks went out.
    """
    lane = lane_get(lane)
    if lane.plain:
        raise LabInputError(
            f"{lane.name} is the plain-Celery control lane; `manage.py lab fidelity` fires it."
        )
    now = time.time()
    p = params if isinstance(params, RunParams) else params_parse(params, now=now)
    prediction = _prediction(prediction)
    if check_limits:
        limits.limits_check(
            count=p.count,
            longest_countdown=p.due_in(p.count - 1, now=now),
            active_runs=_active_runs(learner),
        )
        limits.rate_limit_take(learner=learner)
    status = lane_status(lane, fresh=True)
    if not status.available:
        raise LaneUnavailable(f"{status.reason}. To get it: {status.how_to_get}.")

    run = Run.objects.create(
        learner=learner,
        lane=lane.name,
        params=p.as_dict(),
        prediction=prediction,
        label=label[:120],
        task_ids=[str(uuid.uuid4()) for _ in range(p.count)],
        visibility_timeout=lane.visibility_timeout,
        fired_at=now,
        deadline=_deadline(p, lane, now=now),
    )
    sent = 0
    try:
        sent = _publish(run, lane, p)
    except Exception as exc:
        log.exception("publishing run %s failed after %d tasks", run.id, sent)
        run.status = Run.Status.FAILED
        run.error = (
            f"The {lane.name} broker went away while publishing: {sent} of {p.count} tasks "
            f"went out. ({type(exc).__name__}: {exc})"
        )[:2000]
        run.save(update_fields=["status", "error"])
        raise LaneUnavailable(run.error) from exc
    run.published_at = time.time()
    run.save(update_fields=["published_at"])
    return run


def task_meta(*, run: Run, lane: Lane, p: RunParams) -> dict:
    """The keyword arguments every task of a run carries (its index and publish time aside);
    the publisher here and the experiments' just-in-time feeder both send these."""
    return {
        "run": run.id,
        "fired_at": run.fired_at,
        "vt": lane.visibility_timeout,
        "tasks": len(run.task_ids) or p.count,
        "prediction": run.prediction,
        "duration": p.duration,
        "guard_on": p.guard,
        "guard_ttl": p.guard_ttl,
        "fail": p.fail,
        "retry": p.retry,
        "retry_delay": p.retry_delay,
    }


def _publish(run: Run, lane: Lane, p: RunParams) -> int:
    from teachlab.lab.celery_app import lane_app

    app = lane_app(lane)
    name = TASK_LATE if p.acks_late else TASK_EARLY
    meta = task_meta(run=run, lane=lane, p=p)
    # One short retry: a broker that is gone should fail the run quickly, not hang the page.
    policy = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
    sent = 0
    with app.producer_or_acquire() as producer:
        for index, task_id in enumerate(run.task_ids):
            published = time.time()
            options = {}
            due = p.due_in(index, now=run.fired_at)
            wait = due - (published - run.fired_at)
            if lane.kind == "rabbit" and wait > 0:
                # Native delayed delivery truncates to whole seconds: round up, never early.
                options["countdown"] = math.ceil(wait)
            elif p.eta is not None:
                options["eta"] = datetime.fromtimestamp(run.fired_at + due, tz=UTC)
            elif wait > 0:
                options["countdown"] = wait
            if p.expires is not None:
                options["expires"] = p.expires
            app.send_task(
                name,
                kwargs={**meta, "index": index, "published_at": published},
                task_id=task_id,
                producer=producer,
                retry=True,
                retry_policy=policy,
                **options,
            )
            sent += 1
    return sent


# --- reading --------------------------------------------------------------------------------------


def run_for_learner(run_id, learner) -> Run | None:
    """The run when it exists and this learner owns it; None otherwise (never says which)."""
    if not isinstance(run_id, str) or not run_id or len(run_id) > 32 or learner is None:
        return None
    return Run.objects.filter(id=run_id, learner=learner).first()


def runs_for_learner(learner, *, limit: int = 50) -> list[Run]:
    return list(Run.objects.owned_by(learner).order_by("-created_at")[:limit])


def _event_dict(row: RunEvent, run: Run, counts: dict) -> dict:
    data = dict(row.data or {})
    published = data.pop("published_at", None)
    return {
        "run": run.id,
        "seq": row.seq,
        "kind": row.kind,
        "task_id": row.task_id,
        "index": row.index,
        "copy": row.copy,
        "worker": row.worker,
        "redelivered": row.redelivered,
        "at": row.at,
        "t": row.t,
        "since_publish": round(row.at - published, 4) if published else row.t,
        "eta": row.eta,
        "published_at": published,
        "run_started_at": run.fired_at,
        "visibility_timeout": run.visibility_timeout,
        "tasks": len(run.task_ids),
        "prediction": run.prediction,
        "counts": counts,
        "data": data,
    }


def _tally(tally: Counter, kind: str, copy: int) -> None:
    tally[kind] += 1
    if kind == "received" and copy == 1:
        tally["first"] += 1


def run_events(run: Run, after_seq: int = 0) -> list[dict]:
    """Stored events after `after_seq`, in order, each with the counters as of that event."""
    tasks = len(run.task_ids)
    tally: Counter = Counter()
    if after_seq:
        before = run.events.filter(seq__lte=after_seq)
        for row in before.values("kind").annotate(n=Count("id")):
            tally[row["kind"]] += row["n"]
        tally["first"] = before.filter(kind="received", copy=1).count()
    found = []
    for row in run.events.filter(seq__gt=after_seq).order_by("seq"):
        _tally(tally, row.kind, row.copy)
        found.append(_event_dict(row, run, counts_view(tally, tasks)))
    return found


def _per_task(run: Run) -> dict[str, dict]:
    """Copies received and executed per task id, with when each copy arrived and started
    (seconds since that task was published; a busy machine can publish a little after the run
    was fired, so compare start times with `due_t`, not with the countdown)."""
    per_task = {
        task_id: {
            "index": i,
            "received": 0,
            "executed": 0,
            "suppressed": 0,
            "failed": 0,
            "revoked": 0,
            "requeued": 0,
            "received_t": [],
            "started_t": [],
            "due_t": None,  # when it fell due: its eta, seconds since it was published
        }
        for i, task_id in enumerate(run.task_ids)
    }
    rows = run.events.order_by("seq").values_list("task_id", "kind", "at", "t", "eta", "data")
    for task_id, kind, at, t, eta, data in rows:
        row = per_task.get(task_id)
        if row is None:
            continue
        published = (data or {}).get("published_at")
        since = round(at - published, 3) if published else round(t, 3)
        if row["due_t"] is None and eta is not None and published:
            row["due_t"] = round(eta - published, 3)
        if kind == "received":
            row["received"] += 1
            row["received_t"].append(since)
        elif kind == "started":
            row["executed"] += 1
            row["started_t"].append(since)
        elif kind in {"suppressed", "failed", "revoked", "requeued"}:
            row[kind] += 1
            if kind == "suppressed":
                row["executed"] -= 1
    return per_task


def run_summary(run: Run) -> dict:
    """The counters a learner compares with their prediction, and copies per task."""
    tally: Counter = Counter()
    for kind, copy in run.events.values_list("kind", "copy"):
        _tally(tally, kind, copy)
    counts = counts_view(tally, len(run.task_ids))
    return {
        "run": run.id,
        "lane": run.lane,
        "status": run.status,
        "params": run.params,
        "prediction": run.prediction,
        **counts,
        "per_task": _per_task(run),
    }


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
        if kind == "received":
            copies[task_id][copy] = [worker, at, False]
        elif kind in SETTLED_KINDS:
            if copy in copies[task_id]:
                copies[task_id][copy][2] = True
            more_coming[task_id] = kind == "requeued" or (
                kind == "failed" and bool((data or {}).get("retrying"))
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
    settled = sum(int(raw.get(kind) or 0) for kind in SETTLED_KINDS)
    return int(raw.get("first") or 0) < tasks or settled < tasks


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
        try:
            # Watchers learn of the end through the run's log, after its last event.
            done_append(run_id=run.id, summary=run_summary(run))
        except Exception:
            log.exception("could not announce the end of run %s", run.id)
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
        if kind == "received":
            open_[(task_id, copy)] = worker
        elif kind in SETTLED_KINDS:
            open_.pop((task_id, copy), None)
    held: dict[str, int] = defaultdict(int)
    for worker in open_.values():
        held[worker] += 1
    return dict(held)

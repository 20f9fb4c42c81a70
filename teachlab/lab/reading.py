"""Reading a run: whose it is, its stored events as event dicts, its summary. Pages, sockets,
exports, replays, experiments and the CLI read runs only through these."""

from __future__ import annotations

from collections import Counter

from django.db.models import Count

from teachlab.lab.labevent import counts_view, row_decode
from teachlab.lab.models import Kind, Run

# Ends of a delivery that `per_task` counts under their own names (finished is `executed`).
ENDS_COUNTED = (Kind.SUPPRESSED, Kind.FAILED, Kind.REVOKED, Kind.REQUEUED)


def run_for_learner(run_id, learner) -> Run | None:
    """The run when it exists and this learner owns it; None otherwise (never says which)."""
    if not isinstance(run_id, str) or not run_id or len(run_id) > 32 or learner is None:
        return None
    return Run.objects.filter(id=run_id, learner=learner).first()


def runs_for_learner(learner, *, limit: int = 50) -> list[Run]:
    return list(Run.objects.owned_by(learner).order_by("-created_at")[:limit])


def _tally(tally: Counter, kind: str, copy: int) -> None:
    tally[kind] += 1
    if kind == Kind.RECEIVED and copy == 1:
        tally["first"] += 1


def run_events(run: Run, after_seq: int = 0) -> list[dict]:
    """Stored events after `after_seq`, in order, each with the counters as of that event."""
    tasks = len(run.task_ids)
    tally: Counter = Counter()
    if after_seq:
        before = run.events.filter(seq__lte=after_seq)
        for row in before.values("kind").annotate(n=Count("id")):
            tally[row["kind"]] += row["n"]
        tally["first"] = before.filter(kind=Kind.RECEIVED, copy=1).count()
    found = []
    for row in run.events.filter(seq__gt=after_seq).order_by("seq"):
        _tally(tally, row.kind, row.copy)
        found.append(row_decode(row, run, counts_view(tally, tasks)).as_dict())
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
            **{kind.value: 0 for kind in ENDS_COUNTED},
            "received_t": [],
            "started_t": [],
            "due_t": None,  # when it fell due: its eta, seconds since it was published
        }
        for i, task_id in enumerate(run.task_ids)
    }
    rows = run.events.order_by("seq").values_list(
        "task_id", "kind", "at", "t", "eta", "published_at"
    )
    for task_id, kind, at, t, eta, published in rows:
        row = per_task.get(task_id)
        if row is None:
            continue
        since = round(at - published, 3) if published else round(t, 3)
        if row["due_t"] is None and eta is not None and published:
            row["due_t"] = round(eta - published, 3)
        if kind == Kind.RECEIVED:
            row["received"] += 1
            row["received_t"].append(since)
        elif kind == Kind.STARTED:
            row["executed"] += 1
            row["started_t"].append(since)
        elif kind in ENDS_COUNTED:
            row[kind] += 1
            if kind == Kind.SUPPRESSED:
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
        "visibility_timeout": run.visibility_timeout,
        **counts,
        "per_task": _per_task(run),
    }

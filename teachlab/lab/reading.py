"""Reading a run: whose it is, its stored events as event dicts, its summary. Pages, sockets,
exports, replays, experiments and the CLI read runs only through these, and every count they
show comes from one RunState (runstate.py) fed with the run's events."""

from __future__ import annotations

from teachlab.lab.labevent import row_decode, rows_state
from teachlab.lab.models import Run
from teachlab.lab.runstate import RunState


def run_for_learner(run_id, learner) -> Run | None:
    """The run when it exists and this learner owns it; None otherwise (never says which)."""
    if not isinstance(run_id, str) or not run_id or len(run_id) > 32 or learner is None:
        return None
    return Run.objects.filter(id=run_id, learner=learner).first()


def runs_for_learner(learner, *, limit: int = 50) -> list[Run]:
    return list(Run.objects.owned_by(learner).order_by("-created_at")[:limit])


def run_state(run: Run, *, upto_seq: int | None = None) -> RunState:
    """The run's state from its stored events (up to `upto_seq` when given)."""
    rows = run.events.order_by("seq")
    if upto_seq is not None:
        rows = rows.filter(seq__lte=upto_seq)
    return RunState(run.task_ids).apply_all(rows_state(rows, run.id))


def run_events(run: Run, after_seq: int = 0) -> list[dict]:
    """Stored events after `after_seq`, in order, each with the counters as of that event."""
    state = run_state(run, upto_seq=after_seq) if after_seq else RunState(run.task_ids)
    found = []
    for row in run.events.filter(seq__gt=after_seq).order_by("seq"):
        event = row_decode(row, run)
        state.apply(event)
        event.counts = state.counts()
        found.append(event.as_dict())
    return found


def state_summary(run: Run, state: RunState) -> dict:
    """The counters a learner compares with their prediction, and copies per task."""
    return {
        "run": run.id,
        "lane": run.lane,
        "status": run.status,
        "params": run.params,
        "prediction": run.prediction,
        "visibility_timeout": run.visibility_timeout,
        **state.counts(),
        "max_receipts": state.max_receipts,
        "per_task": state.per_task(),
    }


def run_summary(run: Run) -> dict:
    """state_summary of the run's stored events."""
    return state_summary(run, run_state(run))

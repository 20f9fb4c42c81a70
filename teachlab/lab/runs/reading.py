"""Reading a run: whose it is, its stored events as event dicts, its summary. Pages, sockets,
exports, replays, experiments and the CLI read runs only through these, and every count they
show comes from one RunState (runstate.py) fed with the run's events."""

from __future__ import annotations

from teachlab.lab.eventlog.labevent import LabEvent, row_decode, rows_state
from teachlab.lab.eventlog.runlog import log_ahead, log_events, log_first_seq, log_state
from teachlab.lab.eventlog.runstate import RunState
from teachlab.lab.models import Run


def run_for_learner(run_id, learner) -> Run | None:
    """The run when it exists and this learner owns it; None otherwise (never says which)."""
    if not isinstance(run_id, str) or not run_id or len(run_id) > 32 or learner is None:
        return None
    return Run.objects.filter(id=run_id, learner=learner).first()


def runs_for_learner(learner, *, limit: int = 50) -> list[Run]:
    return list(Run.objects.owned_by(learner).order_by("-created_at")[:limit])


def run_state(run: Run, *, upto_seq: int | None = None) -> RunState:
    """The run's state from its stored events (up to `upto_seq` when given), or from its log
    while the recorder is behind it: no page or summary waits for the recorder."""
    rows = run.events.order_by("seq")
    if upto_seq is not None:
        rows = rows.filter(seq__lte=upto_seq)
        return RunState(run.task_ids).apply_all(rows_state(rows, run.id))
    events = list(rows_state(rows, run.id))
    if log_ahead(run, stored=len(events)):
        return log_state(run)
    return RunState(run.task_ids).apply_all(events)


def _events_all(run: Run) -> list[LabEvent]:
    """Every event of the run: the stored rows, or the log's while the recorder is behind."""
    events = [row_decode(row, run) for row in run.events.order_by("seq")]
    if log_ahead(run, stored=len(events)):
        try:
            return log_events(run)
        except Exception:  # noqa: BLE001 - Redis went away meanwhile: the rows are all there is
            return events
    return events


def run_events(run: Run, after_seq: int = 0) -> list[dict]:
    """Events after `after_seq`, in order, each with the counters as of that event."""
    state = RunState(run.task_ids)
    found = []
    for event in _events_all(run):
        state.apply(event)
        if event.seq > after_seq:
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


def run_stored_head(run_id: str) -> tuple[int | None, dict]:
    """For a reader starting: the stream's first seq (None when empty or gone) and, when that
    is not 1, the run's events it no longer holds (with its summary once it has settled)."""
    first_seq = log_first_seq(run_id)
    run = Run.objects.filter(pk=run_id).first()
    stored: dict = {"events": [], "prediction": run.prediction if run else None}
    if run is None or first_seq == 1:
        return first_seq, stored
    stored["events"] = run_events(run)
    if run.status != Run.Status.RUNNING:
        stored["summary"] = run_summary(run)
    return first_seq, stored

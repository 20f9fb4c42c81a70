"""A run's events as its log holds them, read the way the live readers read it (reader.py):
the stream from seq 1, or, when the stream no longer starts there (trimmed, or renumbered
after the lab's Redis came back empty), the stored rows before it and the stream after.

Settling reads this, so the end of a run is decided from the state the readers hold and a
recorder that is behind cannot hold it up; the database's rows follow within a second."""

from __future__ import annotations

from teachlab.lab.eventlog.labevent import (
    LabEvent,
    RunDone,
    entry_decode,
    row_decode,
    rows_state,
    seq_of,
)
from teachlab.lab.eventlog.runstate import RunState
from teachlab.lab.eventlog.stream import seq_key, stream_key
from teachlab.lab.models import Run
from teachlab.lab.runs.store import app_redis

PAGE = 5000  # entries per XRANGE


def log_issued(run_id: str) -> int:
    """How many events the log has numbered for the run (0 when Redis no longer knows)."""
    return int(app_redis().get(seq_key(run_id)) or 0)


def log_first_seq(run_id: str) -> int | None:
    """The seq the stream starts at now (None when it is empty or gone)."""
    first = app_redis().xrange(stream_key(run_id), count=1)
    return seq_of(first[0][0]) if first else None


def _stream_events(run_id: str) -> list[LabEvent]:
    r, key = app_redis(), stream_key(run_id)
    found: list[LabEvent] = []
    low = "-"
    while True:
        entries = r.xrange(key, min=low, count=PAGE)
        for entry_id, fields in entries:
            decoded = entry_decode(run_id, entry_id, fields)
            if not isinstance(decoded, RunDone):
                found.append(decoded)
        if len(entries) < PAGE:
            return found
        low = f"({entries[-1][0]}"


def log_events(run: Run) -> list[LabEvent]:
    """Every event of the run in seq order, from its log (raises when Redis does not answer).
    Stored rows stand in for the head the stream no longer holds."""
    events = _stream_events(run.id)
    first = events[0].seq if events else log_issued(run.id) + 1
    if first == 1:
        return events
    head = run.events.filter(seq__lt=first) if events else run.events.all()
    return [*(row_decode(row, run) for row in head.order_by("seq")), *events]


def log_state(run: Run) -> RunState:
    """The run's state reduced from its log; from the stored rows alone when Redis does not
    answer (then the database is all there is)."""
    try:
        events = log_events(run)
    except Exception:  # noqa: BLE001 - without Redis, the database decides
        events = list(rows_state(run.events.order_by("seq"), run.id))
    return RunState(run.task_ids).apply_all(events)


def log_ahead(run: Run, *, stored: int) -> bool:
    """The log numbered more events than the `stored` rows: the recorder is behind."""
    try:
        return log_issued(run.id) > stored
    except Exception:  # noqa: BLE001 - without Redis, the database is all there is
        return False

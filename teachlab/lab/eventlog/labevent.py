"""A lab event: its one type, and the one codec that carries it between the worker (a Celery
signal), the run's log (a Redis Stream entry), the database (a RunEvent row) and the pages,
sockets, exports and the CLI (the event dict).

Each field is described once, in FIELDS: its key in a stream entry, how it is written there,
where a stored row keeps it, and which task keyword argument the worker takes it from. A field
added there alone is sent by the worker, stored by the recorder (in the row's `extra` until it
is given a column), carried by every event dict (the stored history, `lab tail --json`, the
exports) and, with `page=True`, written on its copy's row of the run page as `data-<name>`.
Nothing else builds an event (tests/lab/test_labevent.py adds one field and follows it).
"""

from __future__ import annotations

import copy as copying
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from teachlab.lab.eventlog.runstate import totals

DONE = "done"  # the end-of-run marker's kind; not an event kind (models.Kind)


@dataclass(frozen=True)
class Codec:
    """How a value is written in a stream entry (always a string), read back, and taken from
    a task's keyword arguments."""

    encode: Callable[[Any], str]
    decode: Callable[[str], Any]
    cast: Callable[[Any], Any]


TEXT = Codec(str, str, str)
INT = Codec(str, int, int)
FLOAT = Codec(lambda v: repr(float(v)), float, float)  # repr: read back to the same float
FLAG = Codec(lambda v: "1" if v else "0", lambda s: s == "1", bool)
JSON = Codec(lambda v: json.dumps(v, separators=(",", ":")), json.loads, dict)


@dataclass(frozen=True)
class Field:
    name: str
    key: str | None = None  # its key in a stream entry (None: the entry id gives it)
    codec: Codec = TEXT
    default: Any = None
    sent: bool = True  # written by the worker (False: by the append's Lua, like the copy)
    column: bool = False  # a RunEvent column of the same name
    from_run: Callable[[Any], Any] | None = None  # a run-wide value, read back from the Run
    kwarg: str | None = None  # the task keyword argument the worker takes it from
    page: bool = False  # written on its copy's receipt row as data-<name>

    def empty(self) -> Any:
        return copying.copy(self.default)


# Every field of an event, in the event dict's order. One that is neither a RunEvent column
# nor the run's is stored in the row's `extra` (JSON), by name.
FIELDS: tuple[Field, ...] = (
    Field("run", from_run=lambda run: run.id),
    Field("seq", default=0, column=True),
    Field("kind", "k", default="", column=True),
    Field("task_id", "ti", default="", column=True),
    Field("index", "i", INT, 0, column=True, kwarg="index"),
    Field("copy", "c", INT, 1, sent=False, column=True),  # the nth delivery, counted by the append
    Field("worker", "w", default="", column=True),
    Field("redelivered", "r", FLAG, False, column=True),
    Field("at", "a", FLOAT, 0.0, column=True),  # epoch seconds in the worker
    Field("t", "t", FLOAT, column=True),  # seconds since the run was fired
    Field("since_publish", "sp", FLOAT),  # seconds since this task was published
    Field("eta", "e", FLOAT, column=True),
    Field("published_at", "p", FLOAT, column=True, kwarg="published_at"),
    Field("run_started_at", "f", FLOAT, from_run=lambda run: run.fired_at, kwarg="fired_at"),
    Field("visibility_timeout", "v", FLOAT, from_run=lambda r: r.visibility_timeout, kwarg="vt"),
    Field("tasks", "n_tasks", INT, 1, from_run=lambda run: len(run.task_ids), kwarg="tasks"),
    Field("prediction", "pr", INT, from_run=lambda run: run.prediction, kwarg="prediction"),
    Field("data", "d", JSON, {}, column=True),  # what this kind of event says (error, reason)
)


@dataclass
class LabEvent:
    """One thing that happened to one delivery of one task, as a worker's signal saw it."""

    run: str
    kind: str
    task_id: str = ""
    seq: int = 0  # per run, from the append: the total order of the run's events
    index: int = 0
    copy: int = 1
    worker: str = ""
    redelivered: bool = False
    at: float = 0.0
    t: float | None = None
    since_publish: float | None = None
    eta: float | None = None
    published_at: float | None = None
    run_started_at: float | None = None
    visibility_timeout: float | None = None
    tasks: int = 1
    prediction: int | None = None
    data: dict = field(default_factory=dict)
    counts: dict | None = None  # the run's counters as of this event (read, never sent)
    id: str = ""  # the stream entry's id, `<seq>-0`
    extra: dict[str, Any] = field(default_factory=dict)  # FIELDS with no attribute above

    def get(self, name: str) -> Any:
        if name in _ATTRIBUTES:
            return getattr(self, name)
        return self.extra.get(name)

    def set(self, name: str, value: Any) -> None:
        if name in _ATTRIBUTES:
            setattr(self, name, value)
        else:
            self.extra[name] = value

    def as_dict(self) -> dict[str, Any]:
        """The event dict the pages, sockets, exports and the CLI read (docs/reference/lab.md,
        "The event dict")."""
        out: dict[str, Any] = {"run": self.run, "id": self.id or f"{self.seq}-0"}
        for f in FIELDS:
            out[f.name] = self.get(f.name)
        out["counts"] = self.counts
        return out

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> LabEvent:
        """An event dict (as_dict's) back as the event."""
        event = cls(run=values["run"], kind=values["kind"], counts=values.get("counts"))
        event.id = values.get("id") or ""
        for f in FIELDS:
            event.set(f.name, values.get(f.name, f.empty()))
        return event


@dataclass(frozen=True)
class RunDone:
    """The end-of-run marker of a run's log: the run's summary."""

    run: str
    id: str
    summary: dict
    kind: str = DONE

    def as_dict(self) -> dict[str, Any]:
        return {"run": self.run, "id": self.id, "kind": DONE, "summary": self.summary}


_ATTRIBUTES = frozenset(f.name for f in fields(LabEvent)) - {"extra"}


def page_marks(event: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """(attribute name, text) of the fields the run page writes on a copy's row."""
    return tuple(
        (f.name.replace("_", "-"), str(event[f.name]))
        for f in FIELDS
        if f.page and event.get(f.name) is not None
    )


# --- the worker's side -----------------------------------------------------------------------


def event_new(*, kwargs: Mapping[str, Any], at: float, **values: Any) -> LabEvent:
    """An event as the worker builds it: `values` (kind, task_id, worker, redelivered, eta,
    data), the fields taken from the task's keyword arguments, and the times derived here."""
    event = LabEvent(run=kwargs["run"], kind=str(values.pop("kind")), at=at)
    for f in FIELDS:
        if f.kwarg is not None and kwargs.get(f.kwarg) not in (None, ""):
            event.set(f.name, f.codec.cast(kwargs[f.kwarg]))
    for name, value in values.items():
        event.set(name, value)
    if event.run_started_at is None:
        event.run_started_at = at
    if event.published_at is None:
        event.published_at = event.run_started_at
    event.t = round(at - event.run_started_at, 4)
    event.since_publish = round(at - event.published_at, 4)
    return event


def entry_fields(event: LabEvent) -> dict[str, str]:
    """The stream entry's fields: short keys, strings; a value that says nothing (None, {}) is
    left out. The append adds the seq (the entry id), the copy and the run's tallies."""
    out: dict[str, str] = {}
    values, extra = event.__dict__, event.extra  # the worker's hot path: no method calls
    for f in FIELDS:
        if f.key is None or not f.sent:
            continue
        value = values[f.name] if f.name in _ATTRIBUTES else extra.get(f.name)
        if value is not None and value != {}:
            out[f.key] = f.codec.encode(value)
    return out


# --- the log's side --------------------------------------------------------------------------


def seq_of(entry_id: str) -> int:
    return int(entry_id.partition("-")[0])


def counts_parse(text: str | None) -> dict[str, int]:
    """The counters as an entry carries them, "kind=n,...": parts that are not pairs are
    skipped, a count that is not a number raises."""
    raw: dict[str, int] = {}
    if not text:
        return raw
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep:
            raw[key] = int(value)
    return raw


def entry_decode(run_id: str, entry_id: str, entry: Mapping[str, str]) -> LabEvent | RunDone:
    """One stream entry as an event, or the run's end marker. A field the entry lacks (an
    older worker's entry) gets its default; the times such a worker left out are derived."""
    if entry.get("k") == DONE:
        return RunDone(run=run_id, id=entry_id, summary=json.loads(entry["s"]))
    event = LabEvent(run=run_id, kind="", id=entry_id, seq=seq_of(entry_id))
    for f in FIELDS:
        if f.key is None:
            continue
        text = entry.get(f.key)
        missing = text is None or (text == "" and f.codec is not TEXT)
        event.set(f.name, f.empty() if missing else f.codec.decode(text))
    if event.run_started_at is None:
        event.run_started_at = event.at
    if event.published_at is None:
        event.published_at = event.run_started_at
    if event.t is None:
        event.t = round(event.at - event.run_started_at, 4)
    if event.since_publish is None:
        event.since_publish = round(event.at - event.published_at, 4)
    event.counts = totals(counts_parse(entry.get("n")), event.tasks)
    return event


# --- the database's side ---------------------------------------------------------------------


def _stored_apart(f: Field) -> bool:
    """Kept in the row's `extra`: neither a column nor the run's."""
    return not f.column and f.from_run is None


def event_row(event: LabEvent):
    """The RunEvent row that stores `event` (the recorder's only way to build one)."""
    from teachlab.lab.models import RunEvent

    values: dict[str, Any] = {"run_id": event.run}
    for f in FIELDS:
        if f.column:
            value = event.get(f.name)
            limit = getattr(RunEvent._meta.get_field(f.name), "max_length", None)
            values[f.name] = value[:limit] if limit and isinstance(value, str) else value
    extra = {f.name: event.get(f.name) for f in FIELDS if _stored_apart(f)}
    values["extra"] = {name: value for name, value in extra.items() if value is not None}
    return RunEvent(**values)


# The columns a RunState reads: a run's state without building whole rows (rows_state).
STATE_COLUMNS = (
    "seq",
    "kind",
    "task_id",
    "copy",
    "worker",
    "redelivered",
    "at",
    "t",
    "eta",
    "published_at",
    "data",
)


def rows_state(rows, run_id: str | None = None) -> Iterator[LabEvent]:
    """Stored rows (a RunEvent queryset, in the order wanted) as the events a RunState
    applies, with only the fields it reads; rows of several runs when `run_id` is None."""
    if run_id is not None:
        for values in rows.values_list(*STATE_COLUMNS):
            yield LabEvent(run_id, **dict(zip(STATE_COLUMNS, values, strict=True)))
        return
    for run, *values in rows.values_list("run_id", *STATE_COLUMNS):
        yield LabEvent(run, **dict(zip(STATE_COLUMNS, values, strict=True)))


def row_decode(row, run, counts: dict | None = None) -> LabEvent:
    """A stored row back as the event it was (run-wide fields from its run)."""
    event = LabEvent(run=run.id, kind=row.kind, counts=counts)
    extra = row.extra or {}
    for f in FIELDS:
        if f.column:
            event.set(f.name, getattr(row, f.name))
        elif f.from_run is not None:
            event.set(f.name, f.from_run(run))
        elif _stored_apart(f):
            event.set(f.name, extra.get(f.name, f.empty()))
    event.id = f"{event.seq}-0"
    if event.since_publish is None:  # a row stored before the worker sent it
        published = event.published_at
        event.since_publish = round(event.at - published, 4) if published else event.t
    return event

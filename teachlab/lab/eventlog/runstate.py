"""One run's state, reduced from its events: the only place that says what a run's counts are.

`RunState.apply(event)` takes one `labevent.LabEvent` at a time (pure: no I/O, no clock), in
the spirit of Flower's single event state. It holds, per task, every copy (delivery) with who
received it, when, and whether it has ended, and the tallies the pages, the stored history,
the CLI's JSON, the experiment checks, settling and the workshop read:

- `counts()`: the run's totals (what the run page's counters show, `run_summary`);
- `per_task()`: copies received and executed per task, with their times;
- `TaskState`: per-task tallies the experiment checks read (`checks.TASK_METRICS`);
- `ended(holder_gone)`: whether every delivery has ended (settling);
- `open_copies()`, `pending_by_worker()`: deliveries received and not ended (the run page's
  losses, the experiments' holders).

Each web process's run reader holds one, applied as it reads the log (reader.py), so the
page's losses come from the same state as its counters.

The append script (stream.py) keeps the same totals live in Redis as raw per-kind tallies;
`totals()` turns either into the learner's counters, so both read the same way.

**Duplicates** are the receipts beyond the first of each task: a task delivered three times
has two duplicates, a task never delivered has none and hides nothing. Over a run that is
`receipts − tasks that arrived at least once` (the live counters keep it as `received − first`,
`first` counting copy 1 of each task). Not `receipts − tasks`: with task a delivered twice and
task b never, that says 0 while the learner saw a duplicate of a (tests/lab/test_runstate.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from teachlab.lab.models import SETTLING_KINDS, Kind

# What the run page says under the figure, and the experiments' metric list (one wording).
DUPLICATES_MEANING = "Receipts beyond the first of each task: the extra copies."
FIRST = "first"  # the raw tally of copies numbered 1: tasks that arrived at least once


class LabEvent(Protocol):
    """The fields of a labevent.LabEvent that a RunState reads (labevent imports totals()
    from here, so this module names the type without importing it)."""

    seq: int
    kind: str
    task_id: str
    copy: int
    worker: str
    redelivered: bool
    at: float
    t: float | None
    eta: float | None
    published_at: float | None
    data: dict


def totals(raw: Mapping[str, Any], tasks: int) -> dict[str, Any]:
    """The learner's counters from raw per-kind tallies plus `first` (the append script's live
    hash in Redis, or a RunState's own): see the module docstring for duplicates."""

    def n(key: str) -> int:
        return int(raw.get(key) or 0)

    executions = n(Kind.STARTED) - n(Kind.SUPPRESSED)
    return {
        "tasks": tasks,
        "receipts": n(Kind.RECEIVED),
        "executions": executions,
        "suppressed": n(Kind.SUPPRESSED),
        "duplicates": n(Kind.RECEIVED) - n(FIRST),
        "amplification": round(executions / tasks, 3) if tasks else 0.0,
        "failed": n(Kind.FAILED),
        "revoked": n(Kind.REVOKED),
        "finished": n(Kind.FINISHED),
    }


@dataclass
class CopyState:
    """One delivery of a task: who received it, when (epoch seconds), and whether it ended."""

    worker: str
    at: float
    ended: bool = False


@dataclass
class TaskState:
    """One task's copies and tallies."""

    index: int | None = None
    receipts: int = 0
    redelivered: int = 0
    starts: int = 0
    suppressed: int = 0
    completions: int = 0  # finished: the body returned
    failures: int = 0  # failures that end the task
    retries: int = 0  # failures Celery retries (a new delivery follows)
    worker_lost: int = 0  # failures the parent recorded for a dead pool child
    revoked: int = 0
    requeued: int = 0
    delivery_count: int = 0  # the largest x-delivery-count a delivery carried
    workers: set[str] = field(default_factory=set)
    received_t: list[float] = field(default_factory=list)  # seconds since it was published
    started_t: list[float] = field(default_factory=list)
    due_t: float | None = None  # when it fell due: its eta, seconds since it was published
    copies: dict[int, CopyState] = field(default_factory=dict)
    more_coming: bool = False  # its last end was a requeue or a retried failure

    @property
    def executions(self) -> int:
        """Bodies that ran: a copy the guard turned away started but did no work."""
        return self.starts - self.suppressed

    @property
    def duplicates(self) -> int:
        return max(0, self.receipts - 1)


class RunState:
    """A run's state as of the events applied so far (in seq order)."""

    def __init__(self, task_ids: Iterable[str] = (), *, tasks: int | None = None) -> None:
        self.task_ids = list(task_ids)
        self.n_tasks = len(self.task_ids) if tasks is None else tasks
        self.tasks: dict[str, TaskState] = {
            task_id: TaskState(index=i) for i, task_id in enumerate(self.task_ids)
        }
        self.tally: Counter = Counter()  # per kind, and FIRST
        self.last_seq = 0
        self.last_at: float | None = None

    def task(self, task_id: str) -> TaskState:
        found = self.tasks.get(task_id)
        if found is None:
            found = self.tasks[task_id] = TaskState()
        return found

    def apply(self, event: LabEvent) -> None:
        kind, data = event.kind, event.data or {}
        task = self.task(event.task_id)
        self.tally[kind] += 1
        self.last_seq = max(self.last_seq, event.seq or 0)
        self.last_at = event.at
        since = _since(event)
        if task.due_t is None and event.eta is not None and event.published_at:
            task.due_t = round(event.eta - event.published_at, 3)
        if kind == Kind.RECEIVED:
            task.receipts += 1
            if task.receipts == 1:
                self.tally[FIRST] += 1
            task.redelivered += bool(event.redelivered)
            if event.worker:
                task.workers.add(event.worker)
            if data.get("delivery_count"):
                task.delivery_count = max(task.delivery_count, int(data["delivery_count"]))
            task.received_t.append(since)
            task.copies[event.copy] = CopyState(event.worker, event.at)
            return
        if kind == Kind.STARTED:
            task.starts += 1
            task.started_t.append(since)
            return
        if kind not in SETTLING_KINDS:
            return
        copy = task.copies.get(event.copy)
        if copy is not None:
            copy.ended = True
        retrying = kind == Kind.FAILED and bool(data.get("retrying"))
        task.more_coming = kind == Kind.REQUEUED or retrying
        if kind == Kind.FINISHED:
            task.completions += 1
        elif kind == Kind.SUPPRESSED:
            task.suppressed += 1
        elif kind == Kind.REVOKED:
            task.revoked += 1
        elif kind == Kind.REQUEUED:
            task.requeued += 1
        else:
            task.retries += retrying
            task.failures += not retrying
            task.worker_lost += "WorkerLostError" in str(data.get("error", ""))

    def apply_all(self, events: Iterable[LabEvent]) -> RunState:
        for event in events:
            self.apply(event)
        return self

    # --- what the readers read -------------------------------------------------------------

    def counts(self) -> dict[str, Any]:
        return totals(self.tally, self.n_tasks)

    @property
    def duplicates(self) -> int:
        return sum(task.duplicates for task in self.tasks.values())

    @property
    def max_receipts(self) -> int:
        """Receipts of the run's most-delivered task (0 before any arrived)."""
        return max((self.tasks[tid].receipts for tid in self.task_ids), default=0)

    def per_task(self) -> dict[str, dict]:
        """Copies received and executed per task id of the run (the summary's `per_task`),
        with when each copy arrived and started (seconds since that task was published; a
        busy machine can publish a little after the run was fired, so compare start times
        with `due_t`, not with the countdown)."""
        out = {}
        for i, task_id in enumerate(self.task_ids):
            task = self.tasks[task_id]
            out[task_id] = {
                "index": i,
                "received": task.receipts,
                "executed": task.executions,
                Kind.SUPPRESSED.value: task.suppressed,
                Kind.FAILED.value: task.failures + task.retries,
                Kind.REVOKED.value: task.revoked,
                Kind.REQUEUED.value: task.requeued,
                "received_t": list(task.received_t),
                "started_t": list(task.started_t),
                "due_t": task.due_t,
            }
        return out

    def ended(self, holder_gone: Callable[[str, float], bool]) -> bool:
        """Every task received and every delivery ended: finished, suppressed, revoked, failed
        with no retry coming, or requeued by a warm shutdown (a later copy then ends it).

        A delivery held by a crashed worker never reports; once a later copy of that task has
        arrived it is counted as lost when `holder_gone(worker, received_at)` says so (the
        caller asks the worker registry; only then). Until then the run stays open, as the
        broker still owes the learner that copy."""
        for task_id in self.task_ids:
            task = self.tasks[task_id]
            if not task.copies or task.more_coming:
                return False
            latest = max(task.copies)
            for number, copy in task.copies.items():
                if copy.ended:
                    continue
                if number == latest or not holder_gone(copy.worker, copy.at):
                    return False
        return True

    def open_copies(self) -> Iterator[CopyState]:
        """Deliveries received and not ended yet."""
        for task in self.tasks.values():
            for copy in task.copies.values():
                if not copy.ended:
                    yield copy

    def pending_by_worker(self) -> dict[str, int]:
        """Deliveries received and not ended, per worker (who holds what, for experiments)."""
        return dict(Counter(copy.worker for copy in self.open_copies()))


def _since(event: LabEvent) -> float:
    """Seconds since the event's task was published (since the run was fired for a row
    stored before the worker sent when it published)."""
    if event.published_at:
        return round(event.at - event.published_at, 3)
    return round(event.t or 0.0, 3)

"""What a run showed (its events as an Observation) and the metrics read off it.

Metrics are pure functions of the events, so the same numbers show on the experiment page, in
`lab experiment --json` and in the checks (checks.py) and tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import ClassVar

from teachlab.lab.eventlog.runstate import DUPLICATES_MEANING, RunState, TaskState
from teachlab.lab.models import Kind

# Event kinds as the lab records them (models.Kind); one event per delivery.
RECEIVED, STARTED, FINISHED = Kind.RECEIVED, Kind.STARTED, Kind.FINISHED
FAILED, REVOKED, SUPPRESSED = Kind.FAILED, Kind.REVOKED, Kind.SUPPRESSED
FINISHES = (FINISHED, FAILED, SUPPRESSED)  # what ends a running body


@dataclass(frozen=True)
class Event:
    """One thing that happened to one copy of a task, `t` seconds after the run was fired."""

    kind: str
    task_id: str
    t: float
    worker: str = ""
    redelivered: bool = False
    retrying: bool = False  # a failure Celery retries (a new delivery follows)
    worker_lost: bool = False  # a failure the parent recorded for a dead pool child
    delivery_count: int | None = None  # a quorum queue's x-delivery-count on this delivery
    # What a RunState reads of an event (runstate.LabEvent) that an observation does not keep.
    seq: ClassVar[int] = 0
    copy: ClassVar[int] = 1
    eta: ClassVar[float | None] = None
    published_at: ClassVar[float | None] = None

    @property
    def at(self) -> float:
        return self.t

    @property
    def data(self) -> dict:
        lost = "WorkerLostError" if self.worker_lost else ""
        return {"retrying": self.retrying, "error": lost, "delivery_count": self.delivery_count}


@dataclass
class Observation:
    """What one run showed: its tasks (id -> seconds after firing when due) and events."""

    tasks: dict[str, float]
    events: list[Event]
    duration: float = 0.0
    lane: str = ""
    params: dict = field(default_factory=dict)
    visibility_timeout: float | None = None  # the lane's, for copies against wait / timeout
    messages_left: float | None = None  # the run's messages still in the broker at the end
    # what the memory steps saw on the broker (`fill: memory`): queued_at_limit, and
    # unacked_writes_refused once memory is freed
    broker: dict = field(default_factory=dict)

    def of_task(self, task_id: str) -> list[Event]:
        return [e for e in self.events if e.task_id == task_id]

    _state: tuple[int, RunState] | None = field(default=None, repr=False, compare=False)

    def state(self) -> RunState:
        """The run's state (runstate.RunState) from these events: every count a check reads.
        Kept until events are added (the runner's `until` grows an observation as it polls)."""
        if self._state is None or self._state[0] != len(self.events):
            ordered = sorted(self.events, key=lambda e: e.t)
            state = RunState(self.tasks).apply_all(ordered)
            self._state = (len(self.events), state)
        return self._state[1]

    def by_task(self) -> dict[str, list[Event]]:
        grouped: dict[str, list[Event]] = {task_id: [] for task_id in self.tasks}
        for event in sorted(self.events, key=lambda e: e.t):
            grouped.setdefault(event.task_id, []).append(event)
        return grouped


# --- per-task metrics: f(its state, its events, due, observation) -> number or None (never) ---
# Counts come from the task's state in the run's RunState (runstate.py), the one place that
# counts; times come from the task's events.

TaskMetric = Callable[[TaskState, list[Event], float, "Observation"], float | None]


# The metrics that take a kind (or a flag) are plain functions bound with `partial`, not
# factories returning closures: the tables below are built once at import, and a function's
# body must run per evaluation for mutmut to try its mutants (issue 14).


def _tally(name: str, task: TaskState, _events, _due: float, _obs: Observation) -> float:
    """One of the task's tallies in the run state (TaskState: receipts, executions, ...)."""
    value = getattr(task, name)
    return float(len(value) if isinstance(value, set) else value)


def _first(
    kind: str, _task: TaskState, events: list[Event], _due: float, _obs: Observation
) -> float | None:
    times = [e.t for e in events if e.kind == kind]
    return round(min(times), 2) if times else None


def _last(
    kind: str, _task: TaskState, events: list[Event], _due: float, _obs: Observation
) -> float | None:
    times = [e.t for e in events if e.kind == kind]
    return round(max(times), 2) if times else None


def _start_after_due(
    _task: TaskState, events: list[Event], due: float, _obs: Observation
) -> float | None:
    starts = [e.t for e in events if e.kind == STARTED]
    return round(min(starts) - due, 2) if starts else None


def _last_start_after_due(
    _task: TaskState, events: list[Event], due: float, _obs: Observation
) -> float | None:
    starts = [e.t for e in events if e.kind == STARTED]
    return round(max(starts) - due, 2) if starts else None


def _running_at_once(
    _task: TaskState, events: list[Event], _due: float, _obs: Observation
) -> float:
    """Most copies of the task inside their body at the same moment."""
    running = peak = 0
    # At equal times a start sorts after everything else (False < True): finishes count first.
    for event in sorted(events, key=lambda e: (e.t, e.kind == STARTED)):
        if event.kind == STARTED:
            running += 1
            peak = max(peak, running)
        elif event.kind in FINISHES and running:
            running -= 1
    return float(peak)


def _receipts_vs_ceil(
    task: TaskState, _events: list[Event], due: float, obs: Observation
) -> float | None:
    """Deliveries minus ceil(wait / timeout): 0 when every restore came on time (BROKER-FACTS
    1), below 0 when the restore sweep came too late for some."""
    if not obs.visibility_timeout:
        return None
    predicted = max(1, math.ceil(due / obs.visibility_timeout))
    return float(task.receipts - predicted)


TASK_METRICS: dict[str, tuple[TaskMetric, str]] = {
    "receipts": (partial(_tally, "receipts"), "deliveries of the task"),
    "redelivered": (partial(_tally, "redelivered"), "deliveries marked redelivered"),
    "executions": (
        partial(_tally, "executions"),
        "times the body ran (guarded copies excluded)",
    ),
    "completions": (partial(_tally, "completions"), "times the body finished without error"),
    "failures": (partial(_tally, "failures"), "times the body raised"),
    "retries": (partial(_tally, "retries"), "times the body asked for a retry"),
    "suppressed": (partial(_tally, "suppressed"), "copies the idempotency guard turned away"),
    "worker_lost": (
        partial(_tally, "worker_lost"),
        "failures recorded as WorkerLostError (a dead pool child)",
    ),
    "delivery_count": (
        partial(_tally, "delivery_count"),
        "largest x-delivery-count header on a delivery",
    ),
    "revoked": (partial(_tally, "revoked"), "copies revoked (expired) before running"),
    "running_at_once": (_running_at_once, "most copies running at the same moment"),
    "receipts_vs_ceil": (_receipts_vs_ceil, "deliveries minus ceil(wait / visibility timeout)"),
    "workers": (partial(_tally, "workers"), "distinct workers that received it"),
    "first_receipt": (partial(_first, RECEIVED), "seconds after firing of the first delivery"),
    "last_receipt": (partial(_last, RECEIVED), "seconds after firing of the last delivery"),
    "first_start": (partial(_first, STARTED), "seconds after firing the body first started"),
    "start_after_due": (_start_after_due, "seconds from due to the first start"),
    "last_start_after_due": (_last_start_after_due, "seconds from due to the last start"),
}


# --- run metrics: f(observation) -> number ----------------------------------------------------


def _total(metric: str, obs: Observation) -> float:
    return float(sum(v or 0 for v in task_metric(observation=obs, what=metric).values()))


def _extreme(
    metric: str, pick: Callable[[Iterable[float]], float], obs: Observation
) -> float | None:
    values = [v for v in task_metric(observation=obs, what=metric).values() if v is not None]
    return pick(values) if values else None


def _broker(name: str, obs: Observation) -> float | None:
    value = obs.broker.get(name)
    return None if value is None else float(value)


def _amplification(obs: Observation) -> float | None:
    if not obs.tasks:
        return None
    return round(_total("executions", obs) / len(obs.tasks), 2)


def _duplicates(obs: Observation) -> float:
    """The run state's duplicates (runstate.py): receipts beyond the first of each task, as
    the run page counts them; a task that never arrived does not hide another's extra copy."""
    return float(obs.state().duplicates)


def _tasks_run_more_than_once(obs: Observation) -> float:
    return float(
        sum(
            1
            for v in task_metric(observation=obs, what="executions").values()
            if v is not None and v > 1
        )
    )


COUNTED = (
    "receipts",
    "redelivered",
    "executions",
    "completions",
    "failures",
    "retries",
    "suppressed",
    "revoked",
    "worker_lost",
)

RUN_METRICS: dict[str, tuple[Callable[[Observation], float | None], str]] = {
    "tasks": (lambda obs: float(len(obs.tasks)), "tasks fired"),
    **{
        name: (partial(_total, name), f"{TASK_METRICS[name][1]}, all tasks together")
        for name in COUNTED
    },
    "duplicates": (_duplicates, DUPLICATES_MEANING[0].lower() + DUPLICATES_MEANING[1:-1]),
    "amplification": (_amplification, "executions per task"),
    "tasks_run_more_than_once": (_tasks_run_more_than_once, "tasks whose body ran twice or more"),
    "messages_left": (
        lambda obs: obs.messages_left,
        "the run's messages still in the broker when the steps ended",
    ),
    "queued_at_limit": (
        partial(_broker, "queued_at_limit"),
        "the run's messages waiting in the queue when Redis reached its maxmemory",
    ),
    "unacked_writes_refused": (
        partial(_broker, "unacked_writes_refused"),
        "ZADDs to unacked_index Redis refused for memory after it was filled",
    ),
    **{
        f"max_{name}": (partial(_extreme, name, max), f"largest per task: {desc}")
        for name, (_fn, desc) in TASK_METRICS.items()
    },
    **{
        f"min_{name}": (partial(_extreme, name, min), f"smallest per task: {desc}")
        for name, (_fn, desc) in TASK_METRICS.items()
    },
}


def metric_names(per: str) -> tuple[str, ...]:
    return tuple(TASK_METRICS if per == "task" else RUN_METRICS)


def run_metric(*, observation: Observation, what: str) -> float | None:
    return RUN_METRICS[what][0](observation)


def task_metric(*, observation: Observation, what: str) -> dict[str, float | None]:
    fn = TASK_METRICS[what][0]
    grouped = observation.by_task()
    state = observation.state()
    return {
        tid: fn(state.tasks[tid], grouped[tid], due, observation)
        for tid, due in observation.tasks.items()
    }

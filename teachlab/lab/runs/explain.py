"""A run in words and code: what each counter counts, what happened and why (from the run's own
numbers, once it is over), and the plain Celery code that would make the same run.

Plain functions of a summary (reading.run_summary, or the end marker's copy of it) and the
run's parameters: no database, so the reader can draw the end of a run without a query.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from django.urls import NoReverseMatch, reverse

from teachlab.lab.eventlog.runstate import DUPLICATES_MEANING

# Counter key, label, one-line definition (the same words on the run, experiment and room pages).
COUNTERS: list[tuple[str, str, str]] = [
    ("tasks", "Tasks sent", "Messages published: one per task you asked for."),
    ("receipts", "Receipts", "Deliveries a worker took from the broker, every copy counted."),
    ("executions", "Executions", "Times a task body really ran (started, not turned away)."),
    ("duplicates", "Duplicates", DUPLICATES_MEANING),
    ("suppressed", "Suppressed", "Copies the idempotency guard stopped before the body ran."),
    (
        "amplification",
        "Amplification",
        "Executions per task once the run is over; 1.00× is once each.",
    ),
]

# Where each situation is taught and tried: (experiment slug, lesson slug, tier, link text).
COVERED_BY = {
    "beyond": ("countdown-beyond-timeout", "raise-visibility-timeout", "solid",
               "Copies that run together at the due time"),
    "within": ("countdown-within-timeout", "raise-visibility-timeout", "basics",
               "What the visibility timeout measures"),
    "batch": ("paced-batch-vs-feeder", "paced-batch-amplification", "solid",
              "Why a paced batch multiplies"),
    "guard": ("idempotency-guard", "idempotent-task-design", "solid",
              "Claiming work with SET NX"),
    "acks_late": ("acks-late-long-body", "why-task-ran-twice", "solid",
                  "acks_late and long bodies"),
    "rabbit": ("quorum-native-delay", "rabbitmq-same-problem", "senior",
               "Quorum queues on a topic exchange"),
    "shared": ("shortest-timeout-wins", "raise-visibility-timeout", "senior",
               "Trade-offs of a long timeout"),
}  # fmt: skip


def _url(name: str, **kwargs: str) -> str:
    try:
        return reverse(name, kwargs=kwargs)
    except NoReverseMatch:
        return ""


def _s(value: float) -> str:
    """Seconds for reading: 25, 2.5, 0.04."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def copies_expected(*, held_for: float, visibility_timeout: float | None) -> int:
    """Deliveries a Redis lane makes of one message held unacked for `held_for` seconds:
    one, then one more each time the timeout passes, ceil(held_for / timeout) in all (the
    countdown-beyond-timeout and copies-vs-timeout-sweep experiments measure it)."""
    if not visibility_timeout or held_for <= 0:
        return 1
    return max(1, math.ceil(held_for / visibility_timeout - 1e-9))


@dataclass
class TaskStory:
    index: int
    task_id: str
    held_for: float  # seconds the message stayed unacked: the wait, plus the body with acks_late
    expected: int
    seen: int
    executed: int
    suppressed: int


@dataclass
class Explanation:
    """What happened and why, in numbers first, then sentences built from them."""

    lane: str
    visibility_timeout: float | None
    tasks: list[TaskStory]
    paragraphs: list[str] = field(default_factory=list)
    covered: dict[str, str] = field(default_factory=dict)  # experiment and lesson links

    @property
    def expected(self) -> int:
        return sum(t.expected for t in self.tasks)

    @property
    def seen(self) -> int:
        return sum(t.seen for t in self.tasks)

    @property
    def timeouts_passed(self) -> int:
        """Timeouts that ran out while a copy waited (the most for any one task)."""
        return max((t.expected - 1 for t in self.tasks), default=0)


def _held_for(row: dict, params: dict) -> float:
    wait = row.get("due_t")
    if wait is None:
        wait = 0.0
    held = max(0.0, float(wait))
    if params.get("acks_late"):
        # acks_late keeps the message unacked while the body runs too (acks-late-long-body).
        held += float(params.get("duration") or 0)
    return held


def run_explanation(
    *, summary: dict[str, Any], visibility_timeout: float | None, lane_kind: str = "redis"
) -> Explanation | None:
    """The story of a finished run from its summary; None when the summary has no per-task
    numbers (a replay's end, a summary from before they were kept)."""
    per_task = summary.get("per_task")
    if not per_task:
        return None
    params = summary.get("params") or {}
    vt = visibility_timeout if lane_kind == "redis" else None
    stories = []
    for task_id, row in sorted(per_task.items(), key=lambda item: item[1].get("index", 0)):
        held = _held_for(row, params)
        stories.append(
            TaskStory(
                index=int(row.get("index", 0)),
                task_id=task_id,
                held_for=held,
                expected=copies_expected(held_for=held, visibility_timeout=vt),
                seen=int(row.get("received", 0)),
                executed=int(row.get("executed", 0)),
                suppressed=int(row.get("suppressed", 0)),
            )
        )
    story = Explanation(lane=str(summary.get("lane", "")), visibility_timeout=vt, tasks=stories)
    story.paragraphs = _paragraphs(story, params=params, lane_kind=lane_kind, summary=summary)
    story.covered = _covered(story, params=params, lane_kind=lane_kind)
    return story


def _span(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{_s(low)} s" if abs(high - low) < 0.05 else f"{_s(low)}–{_s(high)} s"


def _paragraphs(story: Explanation, *, params: dict, lane_kind: str, summary: dict) -> list[str]:
    n = len(story.tasks)
    parts = []
    if (
        lane_kind == "redis"
        and story.visibility_timeout
        and not any(t.held_for for t in story.tasks)
    ):
        parts.append(
            f"Nothing waited: {'the task was' if n == 1 else 'every task was'} due at once and "
            "its message was acknowledged as the body started, so the visibility timeout "
            "never came into play and one delivery per task is expected. "
            f"Workers received {story.seen} for {n} task{'s' if n != 1 else ''}."
        )
    elif lane_kind != "redis" or not story.visibility_timeout:
        parts.append(
            f"On {story.lane} there is no visibility timeout: RabbitMQ holds a countdown itself "
            f"and hands the message to a worker when it is due, so one delivery per task is "
            f"expected. Workers received {story.seen} for {n} task{'s' if n != 1 else ''}."
        )
    else:
        parts += _timeout_paragraphs(story, params=params, summary=summary)
    parts.append(_executions_paragraph(story))
    return parts


def _timeout_paragraphs(story: Explanation, *, params: dict, summary: dict) -> list[str]:
    """On Redis, when tasks waited: how long, what the timeout predicts, and what came."""
    n = len(story.tasks)
    held = [t.held_for for t in story.tasks]
    what = "the message" if n == 1 else "each message"
    one = "the task" if n == 1 else f"the {n} tasks"
    vt = story.visibility_timeout
    late = " (with acks_late the body's time counts too)" if params.get("acks_late") else ""
    expected = [t.expected for t in story.tasks]
    held_text = (
        f"Redis kept {what} unacknowledged for {_span(held)}{late}. The visibility timeout "
        f"on {story.lane} is {_s(vt)} s, so {story.timeouts_passed} timeout"
        f"{'s' if story.timeouts_passed != 1 else ''} ran out while {one} waited, and "
        f"ceil(wait / {_s(vt)}) predicts {_count_span(expected)} "
        f"cop{'y' if max(expected) == 1 else 'ies'}"
        + (" for the task." if n == 1 else f" per task, {story.expected} in all.")
    )
    more = [t for t in story.tasks if t.seen > t.expected]
    fewer = [t for t in story.tasks if t.seen < t.expected]
    seen_text = f"Workers received {story.seen}"
    if not more and not fewer:
        # "as predicted" beside "You predicted 2" read as the learner's guess (issue 29)
        seen_text += f", exactly what ceil(wait / {_s(vt)}) gives"
        yours = summary.get("prediction")
        seen_text += (
            f"; you predicted {yours}." if yours is not None and yours != story.seen else "."
        )
    else:
        bits = []
        if more:
            bits.append(
                f"{len(more)} task{'s' if len(more) != 1 else ''} came more often than "
                "predicted (a crashed worker, or a shorter timeout on the same Redis "
                "database, hands a message out early)"
            )
        if fewer:
            bits.append(
                f"{len(fewer)} task{'s' if len(fewer) != 1 else ''} came less often "
                "(the restore sweep runs on its own clock, so a task due just after a "
                "timeout can run before its message is handed out again)"
            )
        seen_text += ": " + "; ".join(bits) + "."
    return [held_text, seen_text]


def _executions_paragraph(story: Explanation) -> str:
    """How often the bodies ran, and why more than once."""
    n = len(story.tasks)
    executions = sum(t.executed for t in story.tasks)
    suppressed = sum(t.suppressed for t in story.tasks)
    amp = executions / n if n else 0
    if suppressed:
        return (
            f"The idempotency guard turned away {suppressed} cop"
            f"{'y' if suppressed == 1 else 'ies'}, so the bodies ran {executions} time"
            f"{'s' if executions != 1 else ''} for {n} task{'s' if n != 1 else ''} "
            f"({amp:.2f}× amplification)."
        )
    if story.seen > n:
        return (
            f"Every copy carries the same ETA, so the copies wait side by side and run together "
            f"when the task falls due: {executions} executions for {n} task"
            f"{'s' if n != 1 else ''}, an amplification of {amp:.2f}×. Nothing failed; these "
            "are not retries."
        )
    return (
        f"Each task ran {'once' if amp == 1 else f'{amp:.2f} times on average'}: "
        f"{executions} execution{'s' if executions != 1 else ''} for {n} task"
        f"{'s' if n != 1 else ''}."
    )


def _count_span(values: list[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}–{high}"


def _covered(story: Explanation, *, params: dict, lane_kind: str) -> dict[str, str]:
    if lane_kind != "redis":
        key = "rabbit"
    elif params.get("guard"):
        key = "guard"
    elif story.lane == "redis-shared-long":
        key = "shared"
    elif params.get("acks_late") and float(params.get("duration") or 0) > 0:
        key = "acks_late"
    elif len(story.tasks) > 1 and story.seen > len(story.tasks):
        key = "batch"
    elif story.seen > len(story.tasks) or story.expected > len(story.tasks):
        key = "beyond"
    else:
        key = "within"
    experiment, lesson, tier, text = COVERED_BY[key]
    return {
        "experiment": experiment,
        "experiment_url": _url("lab:experiments:detail", slug=experiment),
        "lesson_url": _url("lessons:tier", slug=lesson, tier=tier),
        "lesson_text": text,
        "tier": tier,
    }


# --- the same run in plain Celery -------------------------------------------------------------

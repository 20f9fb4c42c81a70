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

from teachlab.lab.runstate import DUPLICATES_MEANING

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
    held = [t.held_for for t in story.tasks]
    what = "the message" if n == 1 else "each message"
    one = "the task" if n == 1 else f"the {n} tasks"
    parts = []
    if lane_kind == "redis" and story.visibility_timeout and not any(held):
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
        vt = story.visibility_timeout
        late = " (with acks_late the body's time counts too)" if params.get("acks_late") else ""
        expected = [t.expected for t in story.tasks]
        parts.append(
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
        parts.append(seen_text)
    executions = sum(t.executed for t in story.tasks)
    suppressed = sum(t.suppressed for t in story.tasks)
    amp = executions / n if n else 0
    if suppressed:
        parts.append(
            f"The idempotency guard turned away {suppressed} cop"
            f"{'y' if suppressed == 1 else 'ies'}, so the bodies ran {executions} time"
            f"{'s' if executions != 1 else ''} for {n} task{'s' if n != 1 else ''} "
            f"({amp:.2f}× amplification)."
        )
    elif story.seen > n:
        parts.append(
            f"Every copy carries the same ETA, so the copies wait side by side and run together "
            f"when the task falls due: {executions} executions for {n} task"
            f"{'s' if n != 1 else ''}, an amplification of {amp:.2f}×. Nothing failed; these "
            "are not retries."
        )
    else:
        parts.append(
            f"Each task ran {'once' if amp == 1 else f'{amp:.2f} times on average'}: "
            f"{executions} execution{'s' if executions != 1 else ''} for {n} task"
            f"{'s' if n != 1 else ''}."
        )
    return parts


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


def _py(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


def celery_code(*, params: dict[str, Any], lane) -> str:
    """Python a reader can paste into a project of their own: the app's broker settings as
    the lane sets them (teachlab/lab/celery_app.py) and the call that sends the run's tasks."""
    count = int(params.get("count") or 1)
    countdown = float(params.get("countdown") or 0)
    spacing = float(params.get("spacing") or 0)
    duration = float(params.get("duration") or 0)
    acks_late = bool(params.get("acks_late"))
    lines = ["import time", ""] if duration else []
    if lane.kind == "rabbit":
        lines += [
            "from celery import Celery",
            "from kombu import Exchange, Queue",
            "",
            'app = Celery("shop", broker="amqp://guest:guest@localhost:5672//")',
            f'exchange = Exchange("{lane.queue}", type="{lane.exchange_type}")',
            "app.conf.task_queues = [",
            f'    Queue("{lane.queue}", exchange, routing_key="{lane.queue}",',
            '          queue_arguments={"x-queue-type": "quorum"}),',
            "]",
            f'app.conf.task_default_queue = "{lane.queue}"',
            f'app.conf.task_default_exchange = "{lane.queue}"',
            f'app.conf.task_default_exchange_type = "{lane.exchange_type}"',
            f'app.conf.task_default_routing_key = "{lane.queue}"',
            "# RabbitMQ holds countdowns itself (native delayed delivery) on a topic exchange:",
            'app.conf.broker_native_delayed_delivery_queue_type = "quorum"',
        ]
    else:
        options = lane.transport_options()
        lines += [
            "from celery import Celery",
            "",
            'app = Celery("shop", broker="redis://localhost:6379/0")',
            "app.conf.broker_transport_options = {",
            f'    "visibility_timeout": {_py(options["visibility_timeout"])},'
            "  # seconds a delivery may stay unacked",
            f'    "unacked_restore_interval": {_py(options["unacked_restore_interval"])},'
            "  # kombu's default: 10",
            f'    "unacked_restore_throttle": {_py(options["unacked_restore_throttle"])},'
            "  # kombu's default: 10",
            "}",
            f'app.conf.task_default_queue = "{lane.queue}"',
        ]
    if lane.prefetch_multiplier is not None:
        lines.append(f"app.conf.worker_prefetch_multiplier = {lane.prefetch_multiplier}")
    if params.get("guard"):
        lines[lines.index("from celery import Celery")] = "import redis\nfrom celery import Celery"
        lines.append('redis_client = redis.Redis(host="localhost", db=3)')
    lines += [
        "",
        "",
        f"@app.task(acks_late={acks_late})" + ("  # ack after the body" if acks_late else ""),
        "def work(index):",
    ]
    if params.get("guard"):
        ttl = int(params.get("guard_ttl") or 600)
        lines += [
            "    # the guard: claim the work, not the task id, before doing it",
            f'    if not redis_client.set(f"work:{{index}}", "1", nx=True, ex={ttl}):',
            "        return",
        ]
    lines.append(
        f"    time.sleep({_py(duration)})  # the body" if duration else "    pass  # the body"
    )
    lines += ["", ""]
    call_options = []
    if params.get("eta") not in (None, ""):
        if count > 1 and spacing:
            call_options.append(f"eta=due_at + timedelta(seconds={_py(spacing)} * i)")
        else:
            call_options.append("eta=due_at")
        lines.insert(0, "from datetime import datetime, timedelta, timezone")
        lines.append(
            f"due_at = datetime.fromtimestamp({_py(float(params['eta']))}, tz=timezone.utc)"
        )
    expires = params.get("expires")
    if expires not in (None, ""):
        call_options.append(f"expires={_py(float(expires))}")
    if count == 1:
        if params.get("eta") in (None, "") and countdown:
            call_options.insert(0, f"countdown={_py(countdown)}")
        lines.append(f"work.apply_async(args=[0]{''.join(', ' + o for o in call_options)})")
    else:
        if params.get("eta") in (None, ""):
            due = _py(countdown) if countdown else ""
            step = f"{_py(spacing)} * i" if spacing else ""
            expr = " + ".join(p for p in (due, step) if p) or "0"
            call_options.insert(0, f"countdown={expr}")
        lines.append(f"for i in range({count}):")
        lines.append(f"    work.apply_async(args=[i]{''.join(', ' + o for o in call_options)})")
    return "\n".join(lines) + "\n"

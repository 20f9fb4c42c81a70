"""What a run will cost before it is fired: the deliveries (copies) it makes, the worker
memory they hold at the worst moment, and how long it keeps the lane busy.

On a Redis lane a waiting countdown is handed out again each time its visibility timeout
passes and a restore sweep runs, and every copy is held by a worker until its ETA
(BROKER-FACTS 1 and 3). So a task that waits `w` seconds makes about ceil(w / (timeout +
sweep lag)) copies; `count=2000, countdown=10800` on a 10 s lane is two million of them.
The figures are estimates for refusing and for showing on the form, not a promise.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, fields

from teachlab.lab.runs.lanes import Lane
from teachlab.lab.runs.params import RunParams

# Resident memory a lab worker grows by for each delivery it holds (a countdown task waiting
# for its ETA): median of three runs of scripts/measure_delivery_memory.py (11,594-11,677
# bytes), docs/measurements/results/delivery-memory-20261205T075709Z.json.
BYTES_PER_HELD_DELIVERY = 11_661


@dataclass(frozen=True)
class RunCost:
    deliveries: int  # copies handed to workers, retries and redeliveries included
    held: int  # copies the lane's workers hold at the worst moment
    memory_bytes: int  # what `held` costs in worker memory
    seconds: float  # from firing until the last task's body should end
    copies_per_task: int  # the most copies one task gets

    def as_dict(self) -> dict:
        return {
            "deliveries": self.deliveries,
            "memory_bytes": self.memory_bytes,
            "seconds": self.seconds,
            "held": self.held,
        }

    @property
    def text(self) -> str:
        """The one-line estimate the form and the run page show."""
        noun = "delivery" if self.deliveries == 1 else "deliveries"
        return (
            f"about {self.deliveries:,} {noun}, {memory_text(self.memory_bytes)} of worker "
            f"memory, {seconds_text(self.seconds)}"
        )


def memory_text(size: int) -> str:
    if size < 1_000_000:
        return f"{max(0, round(size / 1000))} KB"
    if size < 10_000_000_000:
        return f"{size / 1_000_000:,.0f} MB"
    return f"{size / 1_000_000_000:,.0f} GB"


def seconds_text(seconds: float) -> str:
    seconds = math.ceil(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def sweep_lag(lane: Lane) -> float:
    """Seconds a stale message waits, on average, for the restore sweep after its timeout:
    half the sweep period (interval x throttle, kombu.transport.redis restore_visible)."""
    if not lane.is_redis or lane.visibility_timeout is None:
        return 0.0
    return lane.restore_interval * max(1, lane.restore_throttle) / 2


def redelivery_period(lane: Lane) -> float | None:
    """Seconds between copies of one waiting message, or None where none is redelivered."""
    if not lane.is_redis or not lane.visibility_timeout:
        return None
    return lane.visibility_timeout + sweep_lag(lane)


def worker_holds_wait(lane: Lane) -> bool:
    """Redis, and RabbitMQ on a direct exchange, hand a countdown to a worker that holds it
    until its ETA; a quorum queue on a topic exchange keeps it in the broker (BROKER-FACTS 6)."""
    return lane.is_redis or lane.exchange_type != "topic"


def copies(hold: float, lane: Lane, *, expires: float | None = None) -> int:
    """Copies of one message that stays unacknowledged `hold` seconds: one at 0, then one per
    period. With `expires`, the first copy received after it is revoked at once and acked
    (celery.worker.strategy), which ends the redeliveries: one more delivery, not held."""
    period = redelivery_period(lane)
    if period is None or hold <= 0:
        return 1
    n = max(1, math.ceil(hold / period))
    if expires is not None and expires < hold:
        n = min(n, math.floor(expires / period) + 2)
    return n


def _received_before(due: float, lane: Lane, *, expires: float | None) -> int:
    """Copies of one task a worker holds just before it is due."""
    if due <= 0 or not worker_holds_wait(lane):
        return 0
    period = redelivery_period(lane)
    n = 1 if period is None else math.ceil(due / period)
    if period is not None and expires is not None:
        n = min(n, math.floor(expires / period) + 1)
    return n


def run_cost(p: RunParams, lane: Lane, *, now: float | None = None) -> RunCost:
    """The cost of firing `p` at `lane` now (see the module docstring for the model)."""
    now = time.time() if now is None else now
    body_acked_late = p.duration if p.acks_late else 0.0
    retries = p.fail if p.retry else 0
    retry_copies = copies(p.retry_delay + body_acked_late, lane, expires=None)
    deaths = p.die if (p.reject_on_worker_lost or p.retry_on_worker_lost) else 0
    deliveries = held = most = 0
    dues = [p.due_in(index, now=now) for index in range(p.count)]  # ascending: spacing >= 0
    for index, due in enumerate(dues):
        made = copies(due + body_acked_late, lane, expires=p.expires)
        most = max(most, made)
        deliveries += made * (1 + retries * retry_copies + deaths)
        # just before task `index` is due, it and every later task are still waiting, each
        # with as many copies as have come so far
        held = max(held, (p.count - index) * _received_before(due, lane, expires=p.expires))
    # bodies that run at once hold their delivery too
    held = max(held, min(p.count, lane.workers * lane.concurrency))
    attempts = 1 + retries
    seconds = (dues[-1] if dues else 0.0) + attempts * p.duration + retries * p.retry_delay
    return RunCost(
        deliveries=deliveries,
        held=held,
        memory_bytes=held * BYTES_PER_HELD_DELIVERY,
        seconds=round(seconds, 1),
        copies_per_task=most,
    )


def run_params_stored(params: dict) -> RunParams:
    """A stored run's parameters as RunParams (keys a newer or older version did not know
    are left out)."""
    known = {f.name for f in fields(RunParams)}
    return RunParams(**{k: v for k, v in (params or {}).items() if k in known})


def run_estimate(run, lane: Lane) -> RunCost:
    """What the cost model said of a stored run when it was fired (the run page, `lab run`)."""
    return run_cost(run_params_stored(run.params), lane, now=run.fired_at or time.time())


def held_from(p: RunParams, lane: Lane, *, fired_at: float, now: float) -> int:
    """Copies a run fired at `fired_at` will still hold at its worst moment from `now` on:
    what a live run keeps taking from its lane."""
    elapsed = max(0.0, now - fired_at)
    held = 0
    for index in range(p.count):
        due = p.due_in(index, now=fired_at)
        if due > elapsed:
            waiting = p.count - index
            held = max(held, waiting * _received_before(due, lane, expires=p.expires))
    return held

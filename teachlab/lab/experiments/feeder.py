"""A just-in-time feeder for experiment 9: the run's schedule stays outside the broker and a
periodic loop publishes each task, with no countdown, at the moment it is due.

This is what a Celery beat job that enqueues due rows does in production; here the loop is the
experiment runner's own tick, so the comparison with a countdown batch is fair: same tasks,
same due times, same lane, same workers.
"""

from __future__ import annotations

import time
import uuid

from teachlab.lab.eventlog.stream import log_open
from teachlab.lab.models import Run
from teachlab.lab.runs.errors import LaneUnavailable
from teachlab.lab.runs.firing import task_meta
from teachlab.lab.runs.lanes import lane_get, lane_status
from teachlab.lab.runs.params import params_parse
from teachlab.lab.worker.celery_app import lane_app
from teachlab.lab.worker.tasks import task_name

TICK = 0.2  # seconds between feeder ticks: a task goes out at most this late


def feeder_run_create(*, learner, lane: str, params: dict, label: str = "") -> Run:
    """Store a run whose tasks are published later by `feeder_tick`, not now."""
    lane = lane_get(lane)
    now = time.time()
    p = params_parse(params, now=now)
    status = lane_status(lane, fresh=True)
    if not status.available:
        raise LaneUnavailable(f"{status.reason}. To get it: {status.how_to_get}.")
    last_due = p.due_in(p.count - 1, now=now)
    run = Run.objects.create(
        learner=learner,
        lane=lane.name,
        params=p.as_dict(),
        label=label[:120],
        task_ids=[str(uuid.uuid4()) for _ in range(p.count)],
        visibility_timeout=lane.visibility_timeout,
        fired_at=now,
        deadline=now + last_due + p.duration + 2 * (lane.visibility_timeout or 0) + 60,
    )
    log_open(run.id)
    return run


def feeder_tick(*, run: Run, sent: set[int], now: float | None = None) -> list[int]:
    """Publish every task of `run` that is due by `now` and not sent yet; returns their indexes."""
    now = time.time() if now is None else now
    p = params_parse(run.params | {"eta": None})
    due = [
        i
        for i in range(len(run.task_ids))
        if i not in sent and run.fired_at + p.due_in(i, now=run.fired_at) <= now
    ]
    if not due:
        return []
    lane = lane_get(run.lane)
    app = lane_app(lane)
    meta = task_meta(run=run, lane=lane, p=p)
    with app.producer_or_acquire() as producer:
        for index in due:
            app.send_task(
                task_name(
                    acks_late=p.acks_late,
                    reject_on_worker_lost=p.reject_on_worker_lost,
                    retry_on_worker_lost=p.retry_on_worker_lost,
                ),
                kwargs={**meta, "index": index, "published_at": time.time()},
                task_id=run.task_ids[index],
                producer=producer,
                **({"expires": p.expires} if p.expires is not None else {}),
            )
            sent.add(index)
    if len(sent) == len(run.task_ids) and run.published_at is None:
        run.published_at = time.time()
        run.save(update_fields=["published_at"])
    return due

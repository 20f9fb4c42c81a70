"""The plain-Celery control lane: redis-short's transport options and worker count on a
database of its own, a task that only counts its executions in Redis, and none of the lab's
signal handlers. What it counts is what uninstrumented Celery does (BROKER-FACTS 12), so a
lab figure is faithful when the lab gives the same number beside it (`lab fidelity`).

python -m teachlab.lab.worker.control --name redis-control-1
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import uuid

CONTROL_LANE = "redis-control"
TASK_COUNT = "control.count"


def executions_key(batch: str) -> str:
    return f"lab:control:{batch}:executions"


def control_count(batch: str) -> None:
    """The control task's body: one INCR, nothing else."""
    from teachlab.lab.runs.store import app_redis

    pipe = app_redis().pipeline(transaction=False)
    pipe.incr(executions_key(batch))
    pipe.expire(executions_key(batch), 2 * 24 * 3600)
    pipe.execute()


_app = None


def control_app():
    """The control lane's Celery app, configured as every lab lane is (celery_app._configure)."""
    global _app
    if _app is None:
        from celery import Celery

        from teachlab.lab.runs.lanes import lane_get
        from teachlab.lab.worker.celery_app import _configure

        _app = Celery("lab-control", set_as_current=False)
        _configure(_app, lane_get(CONTROL_LANE))
        _app.task(name=TASK_COUNT, ignore_result=True, typing=False)(control_count)
    return _app


def control_fire(*, count: int, countdown: float, spacing: float) -> tuple[str, float]:
    """Publish a paced batch exactly as run_fire paces a lab run; returns (batch id, fired at)."""
    from teachlab.lab.runs.params import RunParams

    app = control_app()
    batch = uuid.uuid4().hex
    fired = time.time()
    p = RunParams(count=count, countdown=countdown, spacing=spacing)
    with app.producer_or_acquire() as producer:
        for index in range(count):
            wait = p.due_in(index, now=fired) - (time.time() - fired)
            app.send_task(
                TASK_COUNT,
                args=[batch],
                task_id=str(uuid.uuid4()),
                producer=producer,
                **({"countdown": wait} if wait > 0 else {}),
            )
    return batch, fired


def control_wait(*, batch: str, count: int, last_due: float, timeout: float) -> int:
    """Executions once they have stopped changing after the last task fell due."""
    from teachlab.lab.runs.store import app_redis

    r = app_redis()
    deadline = time.time() + timeout
    seen, steady_since = -1, time.time()
    while time.time() < deadline:
        now = int(r.get(executions_key(batch)) or 0)
        if now != seen:
            seen, steady_since = now, time.time()
        if time.time() > last_due + 3 and now >= count and time.time() - steady_since > 3:
            return now
        time.sleep(0.5)
    return seen


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run one plain-Celery control worker.")
    parser.add_argument("--name", required=True, help="worker name, e.g. redis-control-1")
    parser.add_argument("--loglevel", default=os.environ.get("TEACHLAB_WORKER_LOGLEVEL", "INFO"))
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "teachlab.settings")
    import django

    django.setup()  # settings only; teachlab.lab.worker.signals is never imported here
    from teachlab.lab.runs.lanes import lane_get, worker_hostname

    lane = lane_get(CONTROL_LANE)
    from teachlab.lab.worker.celery_app import worker_args

    hostname = worker_hostname(args.name)
    control_app().worker_main(worker_args(hostname=hostname, lane=lane, loglevel=args.loglevel))


def fidelity_ratio(lab: float, control: float) -> float | None:
    """Lab over control amplification (the same task count on both sides)."""
    if not control or math.isnan(control):
        return None
    return round(lab / control, 3)


if __name__ == "__main__":
    main(sys.argv[1:])

"""The lab task: sleep for `duration`, maybe fail, maybe behind the idempotency guard.

Registered twice on every lane app because `acks_late` is a task option, not a per-call one:
`lab.work` acknowledges when the body starts, `lab.work_late` when it ends.
"""

from __future__ import annotations

import time

from celery import Celery

from teachlab.lab import guard

TASK_EARLY = "lab.work"
TASK_LATE = "lab.work_late"
SUPPRESSED = "suppressed"  # the body's return value when the guard refused the work


class LabBodyFailed(Exception):
    """The failure a run asked for (`fail`), so a learner can watch the guard release."""


def lab_work(
    task,
    *,
    run: str,
    index: int,
    duration: float = 0,
    guard_on: bool = False,
    guard_ttl: int = 600,
    fail: int = 0,
    retry: bool = False,
    retry_delay: float = 1,
    **_meta,
) -> str:
    """One unit of lab work. The guard key comes from the work (run + index), never from the
    Celery task id, so a retry published under a new id would be caught just the same."""
    from teachlab.lab import events
    from teachlab.lab.models import Kind

    key = guard.guard_key(run_id=run, index=index)
    holder = f"{task.request.id}:{task.request.get('lab_receipt', '')}"
    if guard_on and not guard.guard_claim(key=key, holder=holder, ttl=guard_ttl):
        events.event_from_task(task, Kind.SUPPRESSED, data={"guard_key": key})
        return SUPPRESSED
    executions_count(run_id=run, index=index)
    try:
        if duration:
            time.sleep(duration)
        if fail and guard.failure_count(run_id=run, index=index) <= fail:
            raise LabBodyFailed(f"task {index} failed on purpose")
    except Exception as exc:
        if guard_on:
            # Release so a real retry of the same work gets through the guard.
            guard.guard_release(key=key, holder=holder)
        if retry and task.request.retries < max(fail, 1):
            raise task.retry(exc=exc, countdown=retry_delay) from exc
        raise
    return "done"


def executions_key(run_id: str) -> str:
    return f"lab:ran:{run_id}"


def executions_count(*, run_id: str, index: int) -> None:
    """The body's own tally of its executions, per task index: a count kept apart from the
    event log, so the no-loss tests can hold the log against it."""
    from teachlab.lab.store import app_redis

    pipe = app_redis().pipeline(transaction=False)
    pipe.hincrby(executions_key(run_id), str(index), 1)
    pipe.expire(executions_key(run_id), 2 * 24 * 3600)
    pipe.execute()


def register_tasks(app: Celery) -> None:
    options = {"bind": True, "ignore_result": True, "typing": False}
    app.task(name=TASK_EARLY, acks_late=False, **options)(lab_work)
    app.task(name=TASK_LATE, acks_late=True, **options)(lab_work)

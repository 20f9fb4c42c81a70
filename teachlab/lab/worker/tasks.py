"""The lab task: sleep for `duration`, maybe fail, maybe behind the idempotency guard.

Registered twice on every lane app because `acks_late` is a task option, not a per-call one:
`lab.work` acknowledges when the body starts, `lab.work_late` when it ends.
"""

from __future__ import annotations

import os
import signal
import time

from celery import Celery

from teachlab.lab.worker import guard

TASK_EARLY = "lab.work"
TASK_LATE = "lab.work_late"
# What a dead pool child's message gets is a task option too (Task.reject_on_worker_lost,
# Task.retry_on_worker_lost): one more name per setting, e.g.
# "lab.work_late.reject_on_worker_lost".
WORKER_LOST = ("reject_on_worker_lost", "retry_on_worker_lost")
# Celery's default_retry_delay is 180 s; the lab's retry after a lost worker comes in 1 s.
WORKER_LOST_RETRY_DELAY = 1


def task_name(*, acks_late: bool, reject_on_worker_lost: bool, retry_on_worker_lost: bool) -> str:
    name = TASK_LATE if acks_late else TASK_EARLY
    for option, on in zip(WORKER_LOST, (reject_on_worker_lost, retry_on_worker_lost), strict=True):
        if on:
            name += f".{option}"
    return name


def _variants() -> list[tuple[str, dict]]:
    found = []
    for acks_late in (False, True):
        for reject in (False, True):
            for retry in (False, True):
                name = task_name(
                    acks_late=acks_late, reject_on_worker_lost=reject, retry_on_worker_lost=retry
                )
                options = {"acks_late": acks_late}
                if reject:
                    options["reject_on_worker_lost"] = True
                if retry:
                    options["retry_on_worker_lost"] = True
                    options["default_retry_delay"] = WORKER_LOST_RETRY_DELAY
                found.append((name, options))
    return found


LAB_TASKS = frozenset(name for name, _ in _variants())
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
    die: int = 0,
    **_meta,
) -> str:
    """One unit of lab work. The guard key comes from the work (run + index), never from the
    Celery task id, so a retry published under a new id would be caught just the same."""
    from teachlab.lab.models import Kind
    from teachlab.lab.worker import events

    key = guard.guard_key(run_id=run, index=index)
    holder = f"{task.request.id}:{task.request.get('lab_receipt', '')}"
    if guard_on and not guard.guard_claim(key=key, holder=holder, ttl=guard_ttl):
        events.event_from_task(task, Kind.SUPPRESSED, data={"guard_key": key})
        return SUPPRESSED
    executions_count(run_id=run, index=index)
    if die and deaths_count(run_id=run, index=index) <= die:
        # The pool child dies mid-body, as under the OOM killer; its parent sees it go.
        os.kill(os.getpid(), signal.SIGKILL)
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
    from teachlab.lab.runs.store import app_redis

    pipe = app_redis().pipeline(transaction=False)
    pipe.hincrby(executions_key(run_id), str(index), 1)
    pipe.expire(executions_key(run_id), 2 * 24 * 3600)
    pipe.execute()


def deaths_count(*, run_id: str, index: int) -> int:
    """How many times this work item's body has now started under `die` (1 on the first)."""
    from teachlab.lab.runs.store import app_redis

    key = f"lab:deaths:{run_id}:{index}"
    pipe = app_redis().pipeline()
    pipe.incr(key)
    pipe.expire(key, 24 * 3600)
    return int(pipe.execute()[0])


def register_tasks(app: Celery) -> None:
    common = {"bind": True, "ignore_result": True, "typing": False}
    for name, options in _variants():
        app.task(name=name, **common, **options)(lab_work)

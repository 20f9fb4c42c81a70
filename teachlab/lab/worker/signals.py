"""Celery signal handlers in the lab's worker processes: each becomes a lab event.

Imported only by the worker entry point (celery_app.main); Celery's signals are global, so
every handler ignores tasks that are not the lab's.
"""

from __future__ import annotations

import logging
import time

from celery import signals

from teachlab.lab.models import Kind
from teachlab.lab.worker import events
from teachlab.lab.worker.handler_times import (
    handler_cpu_seconds,
    handler_seconds,
    received_cpu_seconds,
    received_seconds,
)
from teachlab.lab.worker.tasks import LAB_TASKS, SUPPRESSED

log = logging.getLogger(__name__)
worker_identity: dict[str, str] = {}  # name, lane: set by celery_app.main


def _ours(task) -> bool:
    return getattr(task, "name", None) in LAB_TASKS


def _safely(fn):
    """A failing event must never fail the task or the consumer."""

    consumer = fn.__name__ == "on_received"

    def wrapper(*args, **kwargs):
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            if fn(*args, **kwargs):
                wall, used = time.perf_counter() - started, time.thread_time() - cpu
                handler_seconds.append(wall)
                handler_cpu_seconds.append(used)
                if consumer:
                    received_seconds.append(wall)
                    received_cpu_seconds.append(used)
        except Exception:
            log.exception("lab signal handler %s failed", fn.__name__)

    wrapper.__name__ = fn.__name__
    return wrapper


@signals.task_received.connect(weak=False)
@_safely
def on_received(sender=None, request=None, **_):
    # Fires once per delivery, before any ETA wait (BROKER-FACTS 2).
    if request is not None and request.name in LAB_TASKS:
        return events.event_received(request)


@signals.task_prerun.connect(weak=False)
@_safely
def on_prerun(sender=None, task_id=None, task=None, **_):
    if _ours(task):
        return events.event_from_task(task, Kind.STARTED)


@signals.task_success.connect(weak=False)
@_safely
def on_success(sender=None, result=None, **_):
    if _ours(sender) and result != SUPPRESSED:
        return events.event_from_task(sender, Kind.FINISHED)


@signals.task_failure.connect(weak=False)
@_safely
def on_failure(sender=None, task_id=None, exception=None, kwargs=None, **_):
    if _ours(sender):
        data = {"error": repr(exception)[:300], "retrying": False}
        return events.event_failed(sender, task_id=task_id, kwargs=kwargs, data=data)


@signals.task_retry.connect(weak=False)
@_safely
def on_retry(sender=None, request=None, reason=None, **_):
    if _ours(sender) and request is not None:
        return events.event_from_context(
            request, Kind.FAILED, data={"error": str(reason)[:300], "retrying": True}
        )


@signals.task_revoked.connect(weak=False)
@_safely
def on_revoked(sender=None, request=None, expired=False, terminated=False, **_):
    if _ours(sender) and request is not None:
        reason = "expired" if expired else ("terminated" if terminated else "revoked")
        return events.event_from_context(request, Kind.REVOKED, data={"reason": reason})


@signals.worker_ready.connect(weak=False)
@_safely
def on_worker_ready(sender=None, **_):
    import gc
    import sys

    from teachlab.lab.worker.heartbeat import heartbeat_start

    # What the worker built while starting never becomes garbage: keep it out of the
    # collector's full passes, which otherwise land inside a handler now and then (a 150 ms
    # pause at p99.9). And hand the GIL round sooner, so a handler whose Redis reply has
    # come does not wait out another thread's 5 ms slice (docs/measurements/history/lab.md).
    gc.freeze()
    sys.setswitchinterval(0.001)
    events.worker_hostname["hostname"] = sender.hostname

    heartbeat_start(
        name=worker_identity.get("name", sender.hostname),
        lane=worker_identity.get("lane", ""),
        hostname=sender.hostname,
    )


@signals.worker_shutting_down.connect(weak=False)
@_safely
def on_worker_shutting_down(**_):
    from teachlab.lab.worker.heartbeat import heartbeat_mark

    heartbeat_mark(state="stopping")
    events.events_requeued()


@signals.worker_shutdown.connect(weak=False)
@_safely
def on_worker_shutdown(**_):
    from teachlab.lab.worker.heartbeat import heartbeat_mark

    heartbeat_mark(state="stopped")

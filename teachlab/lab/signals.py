"""Celery signal handlers in the lab's worker processes: each becomes a lab event.

Imported only by the worker entry point (celery_app.main); Celery's signals are global, so
every handler ignores tasks that are not the lab's.
"""

from __future__ import annotations

import logging

from celery import signals

from teachlab.lab import events
from teachlab.lab.tasks import SUPPRESSED, TASK_EARLY, TASK_LATE

log = logging.getLogger(__name__)
LAB_TASKS = {TASK_EARLY, TASK_LATE}
worker_identity: dict[str, str] = {}  # name, lane: set by celery_app.main


def _ours(task) -> bool:
    return getattr(task, "name", None) in LAB_TASKS


def _safely(fn):
    """A failing event must never fail the task or the consumer."""

    def wrapper(*args, **kwargs):
        try:
            fn(*args, **kwargs)
        except Exception:
            log.exception("lab signal handler %s failed", fn.__name__)

    wrapper.__name__ = fn.__name__
    return wrapper


@signals.task_received.connect(weak=False)
@_safely
def on_received(sender=None, request=None, **_):
    # Fires once per delivery, before any ETA wait (BROKER-FACTS 2).
    if request is not None and request.name in LAB_TASKS:
        events.event_received(request)


@signals.task_prerun.connect(weak=False)
@_safely
def on_prerun(sender=None, task_id=None, task=None, **_):
    if _ours(task):
        events.event_from_task(task, "started")


@signals.task_success.connect(weak=False)
@_safely
def on_success(sender=None, result=None, **_):
    if _ours(sender) and result != SUPPRESSED:
        events.event_from_task(sender, "finished")


@signals.task_failure.connect(weak=False)
@_safely
def on_failure(sender=None, exception=None, **_):
    if _ours(sender):
        events.event_from_task(
            sender, "failed", data={"error": repr(exception)[:300], "retrying": False}
        )


@signals.task_retry.connect(weak=False)
@_safely
def on_retry(sender=None, request=None, reason=None, **_):
    if _ours(sender) and request is not None:
        events.event_from_context(
            request, "failed", data={"error": str(reason)[:300], "retrying": True}
        )


@signals.task_revoked.connect(weak=False)
@_safely
def on_revoked(sender=None, request=None, expired=False, terminated=False, **_):
    if _ours(sender) and request is not None:
        reason = "expired" if expired else ("terminated" if terminated else "revoked")
        events.event_from_context(request, "revoked", data={"reason": reason})


@signals.worker_ready.connect(weak=False)
@_safely
def on_worker_ready(sender=None, **_):
    from teachlab.lab.workers import heartbeat_start

    events.publisher()
    heartbeat_start(
        name=worker_identity.get("name", sender.hostname),
        lane=worker_identity.get("lane", ""),
        hostname=sender.hostname,
    )


@signals.worker_shutting_down.connect(weak=False)
@_safely
def on_worker_shutting_down(**_):
    from teachlab.lab.workers import heartbeat_mark

    heartbeat_mark(state="stopping")
    events.events_requeued()


@signals.worker_shutdown.connect(weak=False)
@_safely
def on_worker_shutdown(**_):
    from teachlab.lab.workers import heartbeat_mark

    events.publisher().flush(timeout=5)
    heartbeat_mark(state="stopped")

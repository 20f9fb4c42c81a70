"""Lab events in the worker: each signal appends one compact entry to its run's stream
(stream.py) in one Redis round trip before the handler returns, and that is all. Rendering,
storing and fan-out happen elsewhere (recorder.py, reader.py), so a SIGKILL loses nothing
that was reported and a busy worker takes messages off the queue as plain Celery would.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from datetime import datetime
from typing import Any

from teachlab.lab.eventlog.labevent import LabEvent, entry_fields, event_new
from teachlab.lab.eventlog.stream import entry_append
from teachlab.lab.models import SETTLING_KINDS, Kind

log = logging.getLogger(__name__)


def _epoch(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, int | float):
        return float(value)
    try:
        return datetime.fromisoformat(str(value)).timestamp()
    except ValueError:
        return None


# A lab Redis that restarts is back within seconds; a body that finishes meanwhile would lose
# its event. So an append that cannot connect is tried again for this long after the first
# failure (the process's, not the event's: during a long outage every append fails at once
# instead of each waiting in turn). Only refused connections: a timeout may have appended.
APPEND_RETRY_SECONDS = 15.0
_down_since: list[float] = []


def _append(event: LabEvent, known_copy: int) -> None:
    import redis

    while True:
        try:
            event.seq, event.copy = entry_append(
                run_id=event.run,
                kind=event.kind,
                task_id=event.task_id,
                known_copy=known_copy,
                fields=entry_fields(event),
            )
        except redis.ConnectionError:
            if not _down_since:
                _down_since.append(time.monotonic())
            if time.monotonic() - _down_since[0] > APPEND_RETRY_SECONDS:
                raise
            time.sleep(0.5)
            continue
        _down_since.clear()
        return


# --- building events in the worker ----------------------------------------------------------

_copies: dict[str, int] = {}  # receipt token -> copy number, for this process's deliveries
_copies_lock = threading.Lock()
held: dict[str, str] = {}  # receipt token -> task id: deliveries this process holds
held_requests: dict[str, object] = {}  # receipt token -> its worker Request (for requeued)
running: set[str] = set()  # receipt tokens whose body is running


def _base(*, kwargs: dict, task_id: str, kind: str, worker: str, redelivered: bool, eta):
    return event_new(
        kwargs=kwargs,
        at=time.time(),
        kind=kind,
        task_id=task_id,
        worker=worker,
        redelivered=bool(redelivered),
        eta=_epoch(eta),
    )


def event_received(request) -> LabEvent | None:
    """From a worker Request (task_received): a new delivery gets a receipt token that follows
    it into the task's context, so later events of this copy carry its copy number."""
    kwargs = request.kwargs or {}
    if "run" not in kwargs:
        return None
    token = uuid.uuid4().hex
    request.request_dict["lab_receipt"] = token
    event = _base(
        kwargs=kwargs,
        task_id=request.id,
        kind=Kind.RECEIVED,
        worker=request.hostname,
        redelivered=(request.delivery_info or {}).get("redelivered"),
        eta=request.eta,
    )
    # A quorum queue counts returns in this header (RabbitMQ 3.10: from the first return on);
    # the delivery limit is judged on it.
    headers = getattr(getattr(request, "message", None), "headers", None) or {}
    if isinstance(headers, dict) and headers.get("x-delivery-count") is not None:
        event.data["delivery_count"] = int(headers["x-delivery-count"])
    _append(event, 0)
    with _copies_lock:
        _copies[token] = event.copy
        held[token] = request.id
        held_requests[token] = request
    return event


def held_prune_pool_settled() -> None:
    """Prefork: a body runs and ends in a pool child, whose events never reach the parent's
    `held`, so the parent drops a delivery once Celery's own state says the pool is done
    with it (accepted by a child, then no longer reserved: `celery.worker.state.task_ready`),
    and counts as running what a child has accepted and not finished."""
    from celery.worker import state

    with _copies_lock:
        for token, request in list(held_requests.items()):
            accepted = getattr(request, "time_start", None) is not None
            if accepted and request not in state.reserved_requests:
                held.pop(token, None)
                held_requests.pop(token, None)
                running.discard(token)
                _copies.pop(token, None)
            elif request in state.active_requests:
                running.add(token)


def events_requeued() -> int:
    """On a warm shutdown the worker hands back what it holds and has not started: one
    `requeued` event per such delivery, so the run knows that copy is over."""
    with _copies_lock:
        waiting = [(t, r) for t, r in held_requests.items() if t in held and t not in running]
    for token, request in waiting:
        _emit_context(
            request._context, Kind.REQUEUED, token, request.id, data={"reason": "warm shutdown"}
        )
    return len(waiting)


def event_from_context(
    request, kind: str, *, data: dict | None = None, task_id: str | None = None
) -> LabEvent | None:
    """From a task's request context (prerun, success, failure, retry, revoked, the guard)."""
    kwargs = getattr(request, "kwargs", None) or {}
    if "run" not in kwargs:
        return None
    token = request.get("lab_receipt") if hasattr(request, "get") else None
    if token is None and kind == Kind.REVOKED:
        # Expired before task_received fired (Celery checks expiry first): still a delivery.
        token = uuid.uuid4().hex
        _emit_context(request, Kind.RECEIVED, token, None, data={"expired_on_arrival": True})
    return _emit_context(request, kind, token, task_id, data=data)


def _emit_context(request, kind, token, task_id, *, data) -> LabEvent:
    delivery = getattr(request, "delivery_info", None) or {}
    event = _base(
        kwargs=request.kwargs,
        task_id=task_id or request.id,
        kind=kind,
        worker=getattr(request, "hostname", "") or "",
        redelivered=delivery.get("redelivered"),
        eta=getattr(request, "eta", None),
    )
    event.data = data or {}
    with _copies_lock:
        known = _copies.get(token, 0) if token else 0
    _append(event, known)
    with _copies_lock:
        if kind == Kind.RECEIVED and token:
            _copies[token] = event.copy
            held[token] = event.task_id
        elif kind == Kind.STARTED and token:
            running.add(token)
        elif kind in SETTLING_KINDS and token:
            running.discard(token)
            held.pop(token, None)
            held_requests.pop(token, None)
            _copies.pop(token, None)
    return event


def event_from_task(task, kind: str, *, data: dict | None = None) -> LabEvent | None:
    return event_from_context(task.request, kind, data=data)


def event_failed(task, *, task_id: str, kwargs: dict | None, data: dict) -> LabEvent | None:
    """From task_failure's own arguments. The task's request context is this task's in the
    process that ran the body, and in a prefork parent on Celery 5.7, which pushes it around
    the signal. Celery 5.3 to 5.6 fire the parent's task_failure (a pool child killed:
    WorkerLostError) with no context pushed (`Request.on_failure`), so the failure is taken
    from the worker Request this process received (its receipt token gives the copy), or, if
    that was already let go, from the signal's task id and kwargs."""
    request = task.request
    if getattr(request, "id", None) != task_id:
        with _copies_lock:
            mine = [r for r in held_requests.values() if getattr(r, "id", None) == task_id]
        mine.sort(key=lambda r: getattr(r, "time_start", None) is not None)  # the one running
        request = _RequestView(mine[-1].request_dict if mine else {})
        request.setdefault("id", task_id)
        request.setdefault("kwargs", kwargs or {})
        request.setdefault("hostname", worker_hostname.get("hostname", ""))
    return event_from_context(request, Kind.FAILED, data=data)


worker_hostname: dict[str, str] = {}  # "hostname": this worker's node name (worker_ready)


class _RequestView(dict):
    """A worker Request's `request_dict` read the way a task's request context is read."""

    def __getattr__(self, name):
        return self.get(name)


# --- messages to channel groups (broker panel, workers list) -------------------------------


def publish_messages(messages: list[tuple[str, dict]]) -> None:
    """Send several (group, message) pairs in one hop into the event loop: the monitor sends
    a handful every half second, and each async_to_sync call costs a loop of its own."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    if not messages:
        return
    layer = get_channel_layer()

    async def send_all():
        for group, message in messages:
            await layer.group_send(group, message)

    async_to_sync(send_all)()

"""Record and publish lab events: one path from a worker signal to the run's channel group and
the database.

The signal thread does one Redis round trip (a Lua script numbering the event and counting it)
and hands the event to a background publisher; the publisher renders the HTML once, sends it
to the run's group, then writes the rows in batches. Publishing before writing keeps the
browser's latency free of SQLite's.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
import uuid
from datetime import datetime
from typing import Any

from teachlab.lab.store import app_redis

log = logging.getLogger(__name__)

KEY_TTL = 2 * 24 * 3600  # seconds the per-run counters live in Redis
TERMINAL = {"finished", "suppressed", "revoked", "failed", "requeued"}

# KEYS: seq, counts, copy.  ARGV: kind, ttl, known copy (0 = unknown).
_NUMBER = """
local seq = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
local copy = tonumber(ARGV[3])
if ARGV[1] == 'received' then
  copy = redis.call('INCR', KEYS[3])
  redis.call('EXPIRE', KEYS[3], ARGV[2])
  if copy == 1 then redis.call('HINCRBY', KEYS[2], 'first', 1) end
elseif copy == 0 then
  copy = tonumber(redis.call('GET', KEYS[3]) or '1')
end
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
redis.call('EXPIRE', KEYS[2], ARGV[2])
return {seq, copy, redis.call('HGETALL', KEYS[2])}
"""
_number_script = None


def counts_view(raw: dict[str, Any], tasks: int) -> dict[str, Any]:
    """The learner's counters from raw per-kind tallies (Redis live, or the stored events)."""

    def n(key: str) -> int:
        return int(raw.get(key) or 0)

    executions = n("started") - n("suppressed")
    return {
        "tasks": tasks,
        "receipts": n("received"),
        "executions": executions,
        "suppressed": n("suppressed"),
        "duplicates": n("received") - n("first"),
        "amplification": round(executions / tasks, 3) if tasks else 0.0,
        "failed": n("failed"),
        "revoked": n("revoked"),
        "finished": n("finished"),
    }


def run_group(run_id: str) -> str:
    return f"lab.run.{run_id}"


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


def _number(event: dict[str, Any], known_copy: int) -> None:
    global _number_script
    if _number_script is None:
        _number_script = app_redis().register_script(_NUMBER)
    run = event["run"]
    seq, copy, flat = _number_script(
        keys=[
            f"lab:run:{run}:seq",
            f"lab:run:{run}:counts",
            f"lab:run:{run}:copy:{event['task_id']}",
        ],
        args=[event["kind"], KEY_TTL, known_copy],
    )
    raw = dict(zip(flat[::2], flat[1::2], strict=True))
    event["seq"] = int(seq)
    event["copy"] = int(copy)
    event["counts"] = counts_view(raw, int(event.get("tasks") or 0))


# --- building events in the worker ----------------------------------------------------------

_copies: dict[str, int] = {}  # receipt token -> copy number, for this process's deliveries
_copies_lock = threading.Lock()
held: dict[str, str] = {}  # receipt token -> task id: deliveries this process holds
held_requests: dict[str, object] = {}  # receipt token -> its worker Request (for requeued)
running: set[str] = set()  # receipt tokens whose body is running


def _base(*, kwargs: dict, task_id: str, kind: str, worker: str, redelivered: bool, eta) -> dict:
    at = time.time()
    fired = float(kwargs.get("fired_at") or at)
    published = float(kwargs.get("published_at") or fired)
    return {
        "run": kwargs["run"],
        "seq": 0,
        "kind": kind,
        "task_id": task_id,
        "index": int(kwargs.get("index", 0)),
        "copy": 0,
        "worker": worker,
        "redelivered": bool(redelivered),
        "at": at,
        "t": round(at - fired, 4),
        "since_publish": round(at - published, 4),
        "eta": _epoch(eta),
        "published_at": published,
        "run_started_at": fired,
        "visibility_timeout": kwargs.get("vt"),
        "tasks": int(kwargs.get("tasks") or 1),
        "prediction": kwargs.get("prediction"),
        "counts": {},
        "data": {},
    }


def event_received(request) -> dict | None:
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
        kind="received",
        worker=request.hostname,
        redelivered=(request.delivery_info or {}).get("redelivered"),
        eta=request.eta,
    )
    _number(event, 0)
    with _copies_lock:
        _copies[token] = event["copy"]
        held[token] = request.id
        held_requests[token] = request
    publisher().put(event)
    return event


def events_requeued() -> int:
    """On a warm shutdown the worker hands back what it holds and has not started: one
    `requeued` event per such delivery, so the run knows that copy is over."""
    with _copies_lock:
        waiting = [(t, r) for t, r in held_requests.items() if t in held and t not in running]
    for token, request in waiting:
        _emit_context(
            request._context, "requeued", token, request.id, data={"reason": "warm shutdown"}
        )
    return len(waiting)


def event_from_context(
    request, kind: str, *, data: dict | None = None, task_id: str | None = None
) -> dict | None:
    """From a task's request context (prerun, success, failure, retry, revoked, the guard)."""
    kwargs = getattr(request, "kwargs", None) or {}
    if "run" not in kwargs:
        return None
    token = request.get("lab_receipt") if hasattr(request, "get") else None
    if token is None and kind == "revoked":
        # Expired before task_received fired (Celery checks expiry first): still a delivery.
        token = uuid.uuid4().hex
        _emit_context(request, "received", token, None, data={"expired_on_arrival": True})
    return _emit_context(request, kind, token, task_id, data=data)


def _emit_context(request, kind, token, task_id, *, data) -> dict:
    delivery = getattr(request, "delivery_info", None) or {}
    event = _base(
        kwargs=request.kwargs,
        task_id=task_id or request.id,
        kind=kind,
        worker=getattr(request, "hostname", "") or "",
        redelivered=delivery.get("redelivered"),
        eta=getattr(request, "eta", None),
    )
    event["data"] = data or {}
    with _copies_lock:
        known = _copies.get(token, 0) if token else 0
    _number(event, known)
    with _copies_lock:
        if kind == "received" and token:
            _copies[token] = event["copy"]
            held[token] = event["task_id"]
        elif kind == "started" and token:
            running.add(token)
        elif kind in TERMINAL and token:
            running.discard(token)
            held.pop(token, None)
            held_requests.pop(token, None)
            _copies.pop(token, None)
    publisher().put(event)
    return event


def event_from_task(task, kind: str, *, data: dict | None = None) -> dict | None:
    return event_from_context(task.request, kind, data=data)


# --- publishing -------------------------------------------------------------------------------


def _render_html(event: dict) -> str | None:
    try:
        from teachlab.lab.fragments import render_event_html
    except ImportError:
        return None
    try:
        return render_event_html(event)
    except Exception:  # a broken fragment must not stop the events themselves
        log.exception("render_event_html failed for %s", event.get("kind"))
        return None


def event_message(event: dict) -> dict:
    message = {"type": "lab.event", "event": event}
    html = _render_html(event)
    if html is not None:
        message["html"] = html
    return message


def events_message(events: list[dict]) -> dict:
    """Several events of one run in one message, in seq order, their HTML joined."""
    message: dict = {"type": "lab.events", "events": events}
    parts = [_render_html(event) for event in events]
    if all(part is not None for part in parts):
        message["html"] = "".join(parts)
    return message


def _row(event: dict):
    from teachlab.lab.models import RunEvent

    data = dict(event.get("data") or {})
    data["published_at"] = event.get("published_at")
    return RunEvent(
        run_id=event["run"],
        seq=event["seq"],
        kind=event["kind"],
        task_id=event["task_id"],
        index=event["index"],
        copy=event["copy"],
        worker=event["worker"][:120],
        redelivered=event["redelivered"],
        at=event["at"],
        t=event["t"],
        eta=event["eta"],
        data=data,
    )


def events_store(events: list[dict]) -> None:
    from django.db import close_old_connections

    from teachlab.lab.models import RunEvent

    close_old_connections()
    RunEvent.objects.bulk_create([_row(e) for e in events], ignore_conflicts=True)


class Publisher(threading.Thread):
    """Sends each event to its run's group in order; a second thread stores them in batches,
    so a slow SQLite write never holds up the next event's publish."""

    def __init__(self) -> None:
        super().__init__(name="lab-publisher", daemon=True)
        self.queue: queue.Queue[dict] = queue.Queue()
        self.to_store: queue.Queue[dict] = queue.Queue()
        self.pending = 0  # events put and not yet stored
        self.lock = threading.Lock()
        threading.Thread(target=self._store_loop, name="lab-event-store", daemon=True).start()

    def put(self, event: dict) -> None:
        with self.lock:
            self.pending += 1
        self.queue.put(event)

    def flush(self, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.pending <= 0:
                return True
            time.sleep(0.02)
        return False

    def _store_loop(self) -> None:
        while True:
            events = _drain(self.to_store)
            time.sleep(0.05)  # let a burst gather into one transaction
            events += _drain(self.to_store, block=False)
            for attempt in range(3):
                try:
                    events_store(events)
                    break
                except Exception:
                    log.exception("storing %d lab events failed (attempt %d)", len(events), attempt)
                    time.sleep(0.2)
            with self.lock:
                self.pending -= len(events)

    @staticmethod
    async def _send(layer, events: list[dict]) -> None:
        """One message per event; with LAB_EVENT_BATCHES on, a burst of one run's events goes
        as one `lab.events` message (a group send costs per member, so 50 watchers x 200
        events is where the time goes)."""
        from django.conf import settings

        if not getattr(settings, "LAB_EVENT_BATCHES", False):
            for event in events:
                await layer.group_send(run_group(event["run"]), event_message(event))
            return
        by_run: dict[str, list[dict]] = {}
        for event in events:
            by_run.setdefault(event["run"], []).append(event)
        for run_id, run_events in by_run.items():
            if len(run_events) == 1:
                await layer.group_send(run_group(run_id), event_message(run_events[0]))
            else:
                await layer.group_send(run_group(run_id), events_message(run_events))

    def run(self) -> None:
        from channels.layers import get_channel_layer

        loop = asyncio.new_event_loop()
        layer = get_channel_layer()
        while True:
            events = _drain(self.queue)
            try:
                loop.run_until_complete(self._send(layer, events))
            except Exception:
                log.exception("publishing lab events failed")
            for event in events:
                self.to_store.put(event)


def _drain(q: queue.Queue, *, block: bool = True, most: int = 500) -> list:
    found = [q.get()] if block else []
    while len(found) < most:
        try:
            found.append(q.get_nowait())
        except queue.Empty:
            break
    return found


_publisher: Publisher | None = None
_publisher_lock = threading.Lock()


def publisher() -> Publisher:
    global _publisher
    with _publisher_lock:
        if _publisher is None or not _publisher.is_alive():
            _publisher = Publisher()
            _publisher.start()
        return _publisher


def publish_message(group: str, message: dict) -> None:
    """Send one message to a group from plain sync code (CLI, monitor, services)."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    async_to_sync(get_channel_layer().group_send)(group, message)

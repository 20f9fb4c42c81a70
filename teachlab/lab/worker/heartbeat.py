"""What runs in each lab worker beside Celery: a heartbeat thread that keeps the worker's record
in the registry fresh (workers.py reads it), obeys the controls sent to its list, and restarts
the worker warmly past its memory ceiling."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import threading
import time

from teachlab.core.percentiles import percentiles_ms
from teachlab.lab.runs.lanes import lane_get
from teachlab.lab.runs.store import app_redis
from teachlab.lab.worker import events, handler_times
from teachlab.lab.worker.versions import worker_versions
from teachlab.lab.worker.workers import (
    BEAT,
    MEMORY_GRACE,
    MEMORY_RESTARTS,
    MEMORY_RESTARTS_KEPT,
    REGISTRY,
    control_key,
    memory_ceiling,
)

log = logging.getLogger(__name__)


_record: dict = {}
_process: dict = {}  # "me": this worker's psutil.Process, for the memory check


def _write(r, record: dict) -> None:
    record["seen_at"] = time.time()
    if record.get("versions", {}).get("pool") == "prefork":
        events.held_prune_pool_settled()
    record["held"] = len(events.held)
    record["running"] = len(events.running)
    # One id per copy, not per task: a worker can hold two deliveries of one task (the restore
    # sweep hands it out again while the first copy waits for its ETA), and the run page's
    # panel exists to count exactly those copies.
    record["held_ids"] = sorted(events.held.values())[:200]
    record["handler_ms"] = handler_stats()
    r.hset(REGISTRY, record["name"], json.dumps(record))


_stats: dict = {"at": 0.0, "value": {"n": 0}}
STATS_EVERY = 2.0  # seconds; sorting 20k numbers takes the GIL for a moment


def handler_stats() -> dict:
    """Milliseconds the lab's signal handlers took per delivery in this worker (the latest
    20k): wall time, and the thread's CPU time within it; under "received", the consumer's
    handler alone."""
    if time.monotonic() - _stats["at"] < STATS_EVERY:
        return _stats["value"]
    value = _percentiles(handler_times.handler_seconds, handler_times.handler_cpu_seconds)
    value["received"] = _percentiles(
        handler_times.received_seconds, handler_times.received_cpu_seconds
    )
    _stats.update(at=time.monotonic(), value=value)
    return value


def _percentiles(wall, cpu) -> dict:
    value = {"n": len(wall)}
    for name, found in (("wall", wall), ("cpu", cpu)):
        if found:
            value[name] = percentiles_ms(found)
    return value


def memory_over(*, rss: int, ceiling: int, holding: int) -> bool:
    """Whether a worker should restart for memory: over the ceiling with deliveries in hand.
    A restart hands those back and frees what they hold; one holding nothing would only
    come back at the same size."""
    return ceiling > 0 and holding > 0 and rss > ceiling


def _memory_check(r, me) -> None:
    """In the heartbeat: record the worker's resident memory and, past the ceiling, leave a
    notice and shut down warmly so the supervisor starts a fresh process. This is the
    ceiling for the threads pool, where worker_max_memory_per_child does nothing, and for a
    prefork parent, which holds the waiting deliveries itself."""
    rss = me.memory_info().rss
    _record["rss"] = rss
    asked = _record.get("memory_restart_at")
    if asked:
        if time.time() - asked > MEMORY_GRACE:
            log.warning("lab worker still over its memory ceiling after %ss: killing", MEMORY_GRACE)
            os.kill(os.getpid(), signal.SIGKILL)
        return
    ceiling, holding = memory_ceiling(), len(events.held) + len(events.running)
    if not memory_over(rss=rss, ceiling=ceiling, holding=holding):
        return
    notice = {
        "name": _record["name"],
        "lane": _record.get("lane", ""),
        "pid": _record.get("pid"),
        "rss": rss,
        "ceiling": ceiling,
        "held": len(events.held),
        "at": time.time(),
    }
    log.warning("lab worker over its memory ceiling, restarting: %s", notice)
    r.lpush(MEMORY_RESTARTS, json.dumps(notice))
    r.ltrim(MEMORY_RESTARTS, 0, MEMORY_RESTARTS_KEPT - 1)
    _record["memory_restart_at"] = notice["at"]
    heartbeat_mark(state="restarting")
    os.kill(os.getpid(), signal.SIGTERM)  # Celery's warm shutdown hands the messages back


def heartbeat_start(*, name: str, lane: str, hostname: str) -> None:
    import psutil

    me = psutil.Process()
    _process["me"] = me
    _record.update(
        name=name,
        lane=lane,
        hostname=hostname,
        host=socket.gethostname(),
        pid=os.getpid(),
        created=me.create_time(),
        started_at=time.time(),
        state="running",
        versions=_versions(lane),
    )
    threading.Thread(target=_beat, name="lab-heartbeat", daemon=True).start()


def _versions(lane: str) -> dict:
    try:
        return worker_versions(lane=lane_get(lane))
    except Exception:  # a lane unknown here must not stop the heartbeat
        log.exception("lab worker could not read its versions")
        return {}


def _beat() -> None:
    r = app_redis()
    r.delete(control_key(_record["name"]))  # a stale order must not hit the new process
    # Still listening while a warm shutdown waits for running tasks: a supervisor's stop ends
    # in a crash when its grace period runs out (worker_stop).
    while _record.get("state") in {"running", "stopping", "restarting"}:
        try:
            if "me" in _process:
                _memory_check(r, _process["me"])
            _write(r, _record)
            got = r.blpop([control_key(_record["name"])], timeout=BEAT)
        except Exception:
            log.exception("lab heartbeat failed")
            time.sleep(BEAT)
            continue
        if got:
            _obey(got[1])


def _obey(action: str) -> None:
    log.warning("lab control: %s", action)
    if action == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "stats-reset":  # `lab fidelity`: the handler times of one batch only
        handler_times.handler_times_clear()
        _stats["at"] = 0.0
    elif action in {"shutdown", "restart"}:
        heartbeat_mark(state="stopping" if action == "shutdown" else "restarting")
        os.kill(os.getpid(), signal.SIGTERM)  # Celery's warm shutdown


def heartbeat_mark(*, state: str) -> None:
    if not _record:
        return
    _record["state"] = state
    try:
        _write(app_redis(), dict(_record))
    except Exception:
        log.exception("lab heartbeat could not record %s", state)

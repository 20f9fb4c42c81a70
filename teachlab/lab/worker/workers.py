"""The lab's worker processes: a registry each worker keeps fresh, and the controls a learner
may use on them (warm shutdown, crash, restart).

Each worker writes its record to a Redis hash twice a second and listens on its own control
list (heartbeat.py, in the worker), so the controls work whatever process (web, CLI,
experiment) asks, on any host. On the
same host a crash is sent straight from the caller with SIGKILL, as the OOM killer would.
"""

from __future__ import annotations

import json
import logging
import signal
import socket
import time

from django.conf import settings

from teachlab.lab.runs.errors import LabError, LabInputError
from teachlab.lab.runs.store import app_redis

log = logging.getLogger(__name__)
REGISTRY = "lab:workers"
BEAT = 0.5  # seconds between heartbeats
ALIVE_WITHIN = 2.5  # a record older than this is a worker that is gone
FORGET_AFTER = 600  # records unseen this long are not listed any more
ACTIONS = ("shutdown", "crash", "restart")
# Workers restarted for memory, newest first (a notice each, kept after the process is gone).
MEMORY_RESTARTS = "lab:memory-restarts"
MEMORY_RESTARTS_KEPT = 50
# Seconds a warm shutdown for memory may take (running bodies finish first) before the
# worker is killed: the ceiling protects the machine, not one run's bodies.
MEMORY_GRACE = 30.0


def control_key(name: str) -> str:
    return f"lab:control:{name}"


def memory_ceiling() -> int:
    """settings.LAB_WORKER_MAX_MEMORY_MB in bytes (0: no ceiling)."""
    return max(0, settings.LAB_WORKER_MAX_MEMORY_MB) * 1_000_000


def memory_restarts(*, within: float = FORGET_AFTER) -> list[dict]:
    """Workers restarted for memory in the last `within` seconds, newest first."""
    found, now = [], time.time()
    for raw in app_redis().lrange(MEMORY_RESTARTS, 0, -1):
        try:
            notice = json.loads(raw)
        except ValueError:
            continue
        if now - float(notice.get("at", 0)) <= within:
            found.append(notice)
    return found


def memory_restart_text(notice: dict) -> str:
    """One sentence for the lab page and the workers panel."""
    from datetime import UTC, datetime

    from teachlab.lab.runs.costs import memory_text

    at = datetime.fromtimestamp(float(notice.get("at", 0)), tz=UTC).strftime("%H:%M:%S UTC")
    held = int(notice.get("held", 0))
    return (
        f"{notice.get('name', 'A worker')} was restarted for memory at {at}: it used "
        f"{memory_text(int(notice.get('rss', 0)))}, over its ceiling of "
        f"{memory_text(int(notice.get('ceiling', 0)))}, holding {held:,} "
        f"{'delivery' if held == 1 else 'deliveries'}, which went back to the queue for the "
        "lane's workers."
    )


# --- anywhere ---------------------------------------------------------------------------------


def _local_process(record: dict):
    """The worker's process when it runs on this host and is still that very process."""
    if record.get("host") != socket.gethostname():
        return None
    import psutil

    try:
        proc = psutil.Process(int(record["pid"]))
        if abs(proc.create_time() - float(record.get("created", 0))) > 0.01:
            return None  # the pid was reused
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return proc
    except (psutil.Error, KeyError, ValueError):
        return None


def workers_list() -> list[dict]:
    """Every lab worker seen recently, by lane then name: alive, and how many deliveries it
    holds (received, not yet settled) and runs right now."""
    from teachlab.lab.runs.lanes import lanes

    order = {lane.name: i for i, lane in enumerate(lanes())}
    now = time.time()
    found = []
    for raw in app_redis().hgetall(REGISTRY).values():
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        age = now - float(record.get("seen_at", 0))
        if age > FORGET_AFTER:
            continue
        alive = record.get("state") == "running" and age < ALIVE_WITHIN
        if alive and record.get("host") == socket.gethostname():
            alive = _local_process(record) is not None
        found.append(
            {
                "name": record["name"],
                "lane": record.get("lane", ""),
                "hostname": record.get("hostname", ""),
                "host": record.get("host", ""),
                "pid": record.get("pid"),
                "alive": alive,
                "state": record.get("state", "") if alive or age < ALIVE_WITHIN else "gone",
                "held": int(record.get("held", 0)) if alive else 0,
                "running": int(record.get("running", 0)) if alive else 0,
                # one task id per copy it holds: the run page's panel counts its own among them
                "held_ids": list(record.get("held_ids") or []) if alive else [],
                "started_at": record.get("started_at"),
                "seen_at": record.get("seen_at"),
                "handler_ms": record.get("handler_ms") or {},
                "rss": int(record.get("rss", 0)) if alive else 0,
                "memory": _memory_words(record) if alive else "",
                "versions": record.get("versions") or {},
            }
        )
    found.sort(key=lambda w: (order.get(w["lane"], 99), w["name"]))
    return found


def _memory_words(record: dict) -> str:
    from teachlab.lab.runs.costs import memory_text

    rss, ceiling = int(record.get("rss", 0)), memory_ceiling()
    return memory_text(rss) + (f" of {memory_text(ceiling)}" if ceiling else "")


def controls_allowed(user=None) -> bool:
    """Worker controls: everyone on a local run (scripts/run sets LAB_LOCAL_CONTROLS), otherwise
    staff only. Never DEBUG: a debug server on a network would open them to anyone."""
    if settings.LAB_LOCAL_CONTROLS:
        return True
    return bool(user is not None and getattr(user, "is_staff", False))


def _worker(name: str) -> dict:
    for worker in workers_list():
        if worker["name"] == name:
            return worker
    raise LabInputError(f"There is no lab worker called {name!r}.")


def worker_control(*, name: str, action: str) -> dict:
    """Ask one worker to shut down warmly, crash, or restart; returns its record as it was."""
    if action not in ACTIONS:
        raise LabInputError(f"Unknown worker action {action!r}; use one of {', '.join(ACTIONS)}.")
    worker = _worker(name)
    if not worker["alive"]:
        raise LabError(
            f"{name} is not running, so it cannot {action}; the supervisor starts exited "
            "workers again within a few seconds."
        )
    if action == "crash":
        record = json.loads(app_redis().hget(REGISTRY, name) or "{}")
        proc = _local_process(record)
        if proc is not None:
            proc.send_signal(signal.SIGKILL)  # no warm shutdown, no restore: like the OOM killer
            return worker
    app_redis().rpush(control_key(name), action)
    app_redis().expire(control_key(name), 30)
    return worker


def worker_stop(*, name: str, grace: float) -> dict:
    """Stop a worker as a supervisor does (`docker stop -t`, systemd's TimeoutStopSec): a warm
    shutdown, then SIGKILL when it is still there after `grace` seconds. A busy worker waits
    for its running tasks, so a grace shorter than they take strands what it holds
    (BROKER-FACTS 4). Returns the worker's record as it was."""
    record = json.loads(app_redis().hget(REGISTRY, name) or "{}")
    worker = worker_control(name=name, action="shutdown")
    proc = _local_process(record)
    if proc is not None:
        import psutil

        try:
            proc.wait(timeout=grace)
        except psutil.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
        except psutil.Error:
            pass  # it is gone already
        return worker
    time.sleep(grace)
    latest = json.loads(app_redis().hget(REGISTRY, name) or "{}")
    still_up = time.time() - float(latest.get("seen_at", 0)) < ALIVE_WITHIN
    if latest.get("pid") == record.get("pid") and still_up and latest.get("state") != "stopped":
        app_redis().rpush(control_key(name), "crash")
        app_redis().expire(control_key(name), 30)
    return worker


def worker_disconnect(*, name: str) -> int:
    """Have the broker close one worker's connections to it (Redis: CLIENT KILL on the worker
    process's own sockets), as a network cut or a broker restart would, while the process
    lives on: what `worker_cancel_long_running_tasks_on_connection_loss` is about. Returns
    how many connections were closed."""
    from urllib.parse import urlsplit

    import redis

    from teachlab.lab.runs.lanes import lane_get

    record = json.loads(app_redis().hget(REGISTRY, name) or "{}")
    lane = lane_get(record.get("lane", ""))
    if not lane.is_redis:
        raise LabInputError(f"{name}: cutting the connection is done on Redis lanes only.")
    proc = _local_process(record)
    if proc is None:
        raise LabError(f"{name} is not a live process on this host, so its sockets are unknown.")
    port = urlsplit(lane.broker_url).port or 6379
    mine = {
        c.laddr.port for c in proc.net_connections(kind="tcp") if c.raddr and c.raddr.port == port
    }
    client = redis.Redis.from_url(lane.broker_url, socket_timeout=5)
    closed = 0
    for entry in client.client_list():
        # only the lane's database: its registry and event connections stay up
        if int(entry.get("db", -1)) == client.connection_pool.connection_kwargs.get("db", 0):
            if int(entry["addr"].rsplit(":", 1)[1]) in mine:
                closed += client.client_kill_filter(_id=entry["id"])
    client.close()
    if not closed:
        raise LabError(f"{name} had no connection to its broker to close.")
    return closed


def worker_pause(*, name: str):
    """Freeze a worker process (SIGSTOP) where it stands, as a long stall would: what the broker
    answers meanwhile waits in its socket. Returns the process, for `worker_resume`."""
    record = json.loads(app_redis().hget(REGISTRY, name) or "{}")
    proc = _local_process(record)
    if proc is None:
        raise LabError(f"{name} is not a live process on this host, so it cannot be paused.")
    proc.send_signal(signal.SIGSTOP)
    return proc


def worker_resume(proc) -> None:
    """Let a paused worker go on (SIGCONT); nothing to do when it has gone meanwhile."""
    import psutil

    try:
        proc.send_signal(signal.SIGCONT)  # psutil refuses a pid reused by another process
    except psutil.Error:
        pass


def worker_shutdown(*, name: str) -> dict:
    return worker_control(name=name, action="shutdown")


def worker_crash(*, name: str) -> dict:
    return worker_control(name=name, action="crash")


def worker_restart(*, name: str) -> dict:
    return worker_control(name=name, action="restart")


def worker_holding(*, task_id: str, lane: str | None = None) -> str | None:
    """Name of the alive worker that holds a delivery of `task_id`, if one reports it (used by
    experiments that crash "the worker that holds the task")."""
    alive = {w["name"] for w in workers_list() if w["alive"]}
    for raw in app_redis().hgetall(REGISTRY).values():
        record = json.loads(raw)
        if lane and record.get("lane") != lane:
            continue
        if record.get("name") in alive and task_id in record.get("held_ids", []):
            return record["name"]
    return None

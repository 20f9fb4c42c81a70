"""Every lane the lab can fire at, in one table: adding a lane is one more entry here (or in
settings.LAB_EXTRA_LANES), nothing else changes."""

from __future__ import annotations

import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from django.conf import settings

from teachlab.lab.errors import LaneUnknown

# `broker` is "redis" (with `db`, a database number on broker_redis_url(), or on the
# noeviction server's with `server: noeviction`) or "rabbit"
# (settings.RABBIT_URL). Sweep options: kombu restores stale unacked messages only every
# interval x throttle seconds (10 x 10 by default, BROKER-FACTS 1); 1 x 1 puts a stale
# message back about a second after its visibility timeout.
LANE_TABLE: list[dict] = [
    {
        "name": "redis-short",
        "broker": "redis",
        "db": 1,
        "visibility_timeout": 10,
        "title": "Redis, 10 s visibility timeout",
        "summary": "A countdown longer than 10 s is handed out again every 10 s while it waits.",
    },
    {
        "name": "redis-long",
        "broker": "redis",
        "db": 2,
        "visibility_timeout": 60,
        "title": "Redis, 60 s visibility timeout",
        "summary": "The usual fix, scaled down: a timeout longer than any countdown you fire.",
    },
    {
        "name": "rabbit-quorum",
        "broker": "rabbit",
        "title": "RabbitMQ quorum queue",
        "summary": "Native delayed delivery: the broker holds the wait, the worker holds nothing.",
    },
    {
        # Experiment 12: a second consumer group on redis-short's database with a longer
        # timeout. The unacked hash is per database, so redis-short's 10 s sweep restores
        # these messages too.
        "name": "redis-shared-long",
        "broker": "redis",
        "db": 1,
        "visibility_timeout": 60,
        "workers": 1,
        "listed": False,
        "title": "Redis, 60 s timeout, sharing redis-short's database",
        "summary": "Its own queue and timeout, but redis-short's workers restore its messages.",
    },
    # Lanes of the guided experiments only (lessons/experiments/), each on a database or queue
    # of its own so that `lab experiment --all` can run them beside the others.
    {
        # busy-warm-shutdown: one task at a time per worker (prefetch 1 plus one slot per
        # waiting ETA message), so which worker holds what follows from the order of firing.
        "name": "redis-busy",
        "broker": "redis",
        "db": 7,
        "visibility_timeout": 30,
        "concurrency": 1,
        "prefetch_multiplier": 1,
        "listed": False,
        "title": "Redis, 30 s timeout, one task at a time per worker",
        "summary": "A worker busy with a long task holds a waiting countdown message too.",
    },
    {
        # The fast sweep of redis-short on a database of its own, for the experiments that
        # compare it with kombu's default sweep (copies against wait / timeout).
        "name": "redis-fast-sweep",
        "broker": "redis",
        "db": 8,
        "visibility_timeout": 10,
        "workers": 1,
        "listed": False,
        "title": "Redis, 10 s timeout, restore sweep every second",
        "summary": "Copies come about ceil(wait / timeout) times; the sweep adds about a second.",
    },
    {
        # The experiments that split their checks by release (sweep-refused-on-redis-6-0,
        # restore-interval-before-kombu-5-7): redis-fast-sweep's settings on a database of its
        # own, so their two-minute watch does not lengthen that lane's chain in `--all`.
        "name": "redis-versions",
        "broker": "redis",
        "db": 13,
        "visibility_timeout": 10,
        "workers": 1,
        "listed": False,
        "title": "Redis, 10 s timeout, restore sweep every second (release checks)",
        "summary": "Where a kombu or Redis release changes what the sweep does.",
    },
    {
        # quorum-direct-prefetch: Celery's default direct exchange. Native delayed delivery
        # refuses it, so the worker holds ETA messages, and with a quorum queue Celery turns
        # the prefetch count static (celery.worker.consumer.tasks.Tasks.qos_global): each
        # waiting ETA message keeps one of the prefetch slots (here 2) until it runs.
        "name": "rabbit-quorum-direct",
        "broker": "rabbit",
        "exchange_type": "direct",
        "concurrency": 2,
        "prefetch_multiplier": 1,
        "workers": 1,
        "listed": False,
        "title": "RabbitMQ quorum queue on a direct exchange",
        "summary": "The worker holds countdowns itself, and they take its prefetch slots.",
    },
    {
        # quorum-delivery-limit: RabbitMQ drops a message returned more than this many times
        # (3.10 has no default limit; 4.0 sets 20).
        "name": "rabbit-delivery-limit",
        "broker": "rabbit",
        "queue_arguments": {"x-delivery-limit": 1},
        "listed": False,
        "title": "RabbitMQ quorum queue with x-delivery-limit 1",
        "summary": "A message that comes back a second time is dropped.",
    },
]

# The worker setting the connection-loss experiment shows (off by default in 5.7; Celery says
# 6.0 will turn it on).
CANCEL_ON_CONNECTION_LOSS = {"worker_cancel_long_running_tasks_on_connection_loss": True}

# Production Celery's default pool: a task runs in a forked child, so a child can die (the
# OOM killer, a segfault) under a parent that lives on and settles the message itself
# (celery.worker.request.Request.on_failure, WorkerLostError). One worker with one child,
# so "the child" is never ambiguous.
LANE_TABLE += [
    {
        "name": "redis-prefork",
        "broker": "redis",
        "db": 9,
        "visibility_timeout": 30,
        "pool": "prefork",
        "workers": 1,
        "concurrency": 1,
        # Room for one more message: a consumer that may not take one issues no BRPOP, so
        # it would not notice a closed connection while its task runs.
        "prefetch_multiplier": 2,
        "celery": CANCEL_ON_CONNECTION_LOSS,
        "listed": False,
        "title": "Redis, prefork pool (one child)",
        "summary": "A killed pool child under a live parent: WorkerLostError, not a crash.",
    },
    {
        "name": "rabbit-prefork",
        "broker": "rabbit",
        "pool": "prefork",
        "workers": 1,
        "concurrency": 1,
        "prefetch_multiplier": 1,
        "listed": False,
        "title": "RabbitMQ quorum queue, prefork pool (one child)",
        "summary": "A requeued delivery raises the quorum queue's delivery count.",
    },
    {
        # redis-prefork's settings on the lab's usual pool, for the experiment that cuts the
        # connection: the threads pool has no terminate_job, so the cancel cannot stop a body.
        # Two threads, so the redelivered copy can start beside the old one.
        "name": "redis-threads-cancel",
        "broker": "redis",
        "db": 10,
        "visibility_timeout": 30,
        "workers": 1,
        "concurrency": 2,
        "prefetch_multiplier": 1,
        "celery": CANCEL_ON_CONNECTION_LOSS,
        "listed": False,
        "title": "Redis, threads pool, cancelling long tasks on connection loss",
        "summary": "The cancel fails on threads: the old body runs on beside its redelivery.",
    },
    {
        # lost-binding-drops-restore: a topic exchange of its own, so kombu publishes and
        # restores through the exchange's binding set (`_lookup`), not the anonymous exchange
        # Celery uses for a direct queue. A short timeout makes the restore come soon.
        "name": "redis-named-exchange",
        "broker": "redis",
        "db": 11,
        "visibility_timeout": 3,
        "workers": 1,
        "celery": {
            "task_default_exchange": "lab-redis-named-exchange",
            "task_default_exchange_type": "topic",
            "task_default_routing_key": "lab-redis-named-exchange",
        },
        "listed": False,
        "title": "Redis, a topic exchange of its own, 3 s timeout",
        "summary": "Publishing and restoring read the exchange's binding set.",
    },
]

# noeviction-loses-popped: a Redis server of its own (settings.LAB_NOEVICTION_REDIS_URL),
# started with NOEVICTION_SERVER_ARGS, since maxmemory is a whole server's setting: filling it
# on the shared broker would stop every other lane. One worker with one thread.
NOEVICTION_SERVER_ARGS = ["--maxmemory", "8mb", "--maxmemory-policy", "noeviction"]
LANE_TABLE.append(
    {
        "name": "redis-noeviction",
        "broker": "redis",
        "server": "noeviction",
        "db": 0,
        "visibility_timeout": 30,
        "workers": 1,
        "concurrency": 1,
        "prefetch_multiplier": 1,
        "listed": False,
        "title": "Redis with a small maxmemory and noeviction, a server of its own",
        "summary": "At the memory limit a worker still pops a message it cannot record.",
    }
)

# The plain-Celery control (teachlab/lab/control.py): redis-short's entry on its own database,
# so its transport options and worker count are redis-short's by construction.
LANE_TABLE.append(
    {
        **LANE_TABLE[0],
        "name": "redis-control",
        "db": 6,
        "listed": False,
        "plain": True,
        "title": "Plain Celery control for redis-short",
        "summary": "No lab signal handlers: counts executions only (`lab fidelity`).",
    }
)

HOW_TO_GET = {
    "redis": "apt install redis-server (or `docker compose up -d redis`); scripts/run starts "
    "one itself when none answers",
    "rabbit": "apt install rabbitmq-server && rabbitmq-server -detached (or `docker compose up "
    "-d rabbitmq`), and set TEACHLAB_RABBIT_URL if it is not amqp://guest:guest@127.0.0.1:5672//",
}


@dataclass(frozen=True)
class Lane:
    """One broker configuration with its own queue, served by its own worker processes."""

    name: str
    kind: str  # "redis" | "rabbit"
    broker_url: str
    queue: str
    visibility_timeout: float | None = None
    restore_interval: float = 1
    restore_throttle: int = 1
    workers: int = 2
    concurrency: int = 8
    prefetch_multiplier: int | None = None  # None: Celery's default (4)
    exchange_type: str = "topic"  # RabbitMQ lanes; native delayed delivery needs topic
    pool: str = "threads"  # "prefork" for the lanes that show a dead pool child
    listed: bool = True
    plain: bool = False  # the control lane: plain Celery, no lab handlers, not fired by runs
    title: str = ""
    summary: str = ""
    extra_options: dict = field(default_factory=dict, hash=False, compare=False)
    queue_arguments: dict = field(default_factory=dict, hash=False, compare=False)
    celery: dict = field(default_factory=dict, hash=False, compare=False)  # app conf on top

    @property
    def is_redis(self) -> bool:
        return self.kind == "redis"

    def transport_options(self) -> dict:
        if not self.is_redis:
            return dict(self.extra_options)
        return {
            "visibility_timeout": self.visibility_timeout,
            "unacked_restore_interval": self.restore_interval,
            "unacked_restore_throttle": self.restore_throttle,
            **self.extra_options,
        }


def broker_redis_url() -> str:
    """The Redis server of the lanes' brokers: REDIS_URL's unless `lab matrix` set another."""
    return settings.LAB_BROKER_REDIS_URL or settings.REDIS_URL


def lane_from_entry(entry: dict) -> Lane:
    kind = entry["broker"]
    if kind == "redis":
        server = (
            settings.LAB_NOEVICTION_REDIS_URL
            if entry.get("server") == "noeviction"
            else broker_redis_url()
        )
        url = entry.get("url") or f"{server}/{entry['db']}"
    elif kind == "rabbit":
        url = entry.get("url") or settings.RABBIT_URL
    else:
        raise ValueError(f"lane {entry['name']}: unknown broker {kind!r}")
    return Lane(
        name=entry["name"],
        kind=kind,
        broker_url=url,
        queue=entry.get("queue", f"lab-{entry['name']}"),
        visibility_timeout=entry.get("visibility_timeout"),
        restore_interval=entry.get("restore_interval", 1),
        restore_throttle=entry.get("restore_throttle", 1),
        workers=entry.get("workers", 2),
        concurrency=entry.get("concurrency", 8),
        prefetch_multiplier=entry.get("prefetch_multiplier"),
        exchange_type=entry.get("exchange_type", "topic"),
        pool=entry.get("pool", "threads"),
        listed=entry.get("listed", True),
        plain=entry.get("plain", False),
        title=entry.get("title", entry["name"]),
        summary=entry.get("summary", ""),
        extra_options=entry.get("transport_options", {}),
        queue_arguments=entry.get("queue_arguments", {}),
        celery=entry.get("celery", {}),
    )


_built: dict[tuple, list[Lane]] = {}


def lanes(*, listed_only: bool = False) -> list[Lane]:
    """Built from the settings they depend on, so tests that point settings elsewhere just
    work; cached per those values, since the monitor asks for them hundreds of times a second."""
    extra = getattr(settings, "LAB_EXTRA_LANES", [])
    key = (broker_redis_url(), settings.LAB_NOEVICTION_REDIS_URL, settings.RABBIT_URL, repr(extra))
    found = _built.get(key)
    if found is None:
        found = [lane_from_entry(e) for e in [*LANE_TABLE, *extra]]
        if len(_built) > 32:
            _built.clear()
        _built[key] = found
    return [lane for lane in found if lane.listed or not listed_only]


def lane_get(name: str | Lane) -> Lane:
    if isinstance(name, Lane):
        return name
    for lane in lanes():
        if lane.name == name:
            return lane
    known = ", ".join(lane.name for lane in lanes(listed_only=True))
    raise LaneUnknown(f"There is no lane called {name!r}. Pick one of: {known}.")


@dataclass(frozen=True)
class LaneStatus:
    lane: Lane
    available: bool
    reason: str = ""
    how_to_get: str = ""


# What each broker URL answered, and when: lanes that share a broker (four RabbitMQ lanes share
# one) share one probe, so a page listing every lane costs one connect timeout per broker.
_status_cache: dict[str, tuple[float, str]] = {}
STATUS_TTL = 3.0  # seconds; pages ask on every load, a dead broker costs a connect timeout


def _redis_reason(url: str) -> str:
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1).ping()
    except Exception as exc:  # noqa: BLE001 - any failure means "unavailable", with its text
        return f"Redis at {_where(url)} does not answer: {exc}"
    return ""


def _rabbit_reason(url: str) -> str:
    from kombu import Connection

    try:
        with Connection(url, connect_timeout=2) as conn:
            # no retry: a refused connection is the answer, and kombu's retry would sleep 2 s
            # first (interval_start); a silent host still costs at most the 2 s timeout
            conn.ensure_connection(max_retries=0, timeout=2)
    except Exception as exc:  # noqa: BLE001
        return f"RabbitMQ at {_where(url)} does not answer: {exc}"
    return ""


def _where(url: str) -> str:
    parsed = urlparse(url)
    vhost = parsed.path.lstrip("/") or "/"
    host = f"{parsed.hostname}:{parsed.port or ''}".rstrip(":")
    return f"{host} (vhost {vhost})" if parsed.scheme.startswith("amqp") else host


def lane_status(name: str | Lane, *, fresh: bool = False) -> LaneStatus:
    """Whether the lane's broker answers now (cached a few seconds), and if not why and how to
    get one."""
    lane = lane_get(name)
    cached = _status_cache.get(lane.broker_url)
    if cached and not fresh and time.monotonic() - cached[0] < STATUS_TTL:
        reason = cached[1]
    else:
        probe = _redis_reason if lane.is_redis else _rabbit_reason
        reason = probe(lane.broker_url)
        _status_cache[lane.broker_url] = (time.monotonic(), reason)
    return LaneStatus(lane, not reason, reason, HOW_TO_GET[lane.kind] if reason else "")


def worker_name(lane: Lane, number: int) -> str:
    return f"{lane.name}-{number}"


def worker_hostname(name: str) -> str:
    return f"{name}@{socket.gethostname()}"


def worker_argv(lane: Lane, number: int) -> list[str]:
    if lane.plain:
        return [sys.executable, "-m", "teachlab.lab.control", "--name", worker_name(lane, number)]
    return [
        sys.executable,
        "-m",
        "teachlab.lab.celery_app",
        "--lane",
        lane.name,
        "--name",
        worker_name(lane, number),
    ]


def worker_commands(base_dir: Path) -> list[tuple[str, list[str], dict[str, str]]]:
    """What scripts/run supervises for the lab: the workers of every lane whose broker answers,
    and one monitor (broker snapshots, worker list, settling runs)."""
    commands = []
    for lane in lanes():
        status = lane_status(lane, fresh=True)
        if not status.available:
            print(
                f"  lane       {lane.name} unavailable: {status.reason}\n"
                f"             to get it: {status.how_to_get}"
            )
            continue
        for number in range(1, lane.workers + 1):
            commands.append((worker_name(lane, number), worker_argv(lane, number), {}))
    commands.append(
        ("lab-monitor", [sys.executable, str(Path(base_dir) / "manage.py"), "lab", "monitor"], {})
    )
    return commands

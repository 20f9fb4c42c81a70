"""The lanes the lab can fire at, read from their table (lanetable.py): each as a Lane, whether
its broker answers now, and the worker processes scripts/run starts for it."""

from __future__ import annotations

import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from django.conf import settings

from teachlab.lab.runs.errors import LaneUnknown
from teachlab.lab.runs.lanetable import LANE_TABLE

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
        return [
            sys.executable,
            "-m",
            "teachlab.lab.worker.control",
            "--name",
            worker_name(lane, number),
        ]
    return [
        sys.executable,
        "-m",
        "teachlab.lab.worker.celery_app",
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

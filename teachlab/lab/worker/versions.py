"""The versions a run was measured on: the broker server's and the libraries' in the worker.

A claim is true on the versions it was shown on (issue 25), so each worker reports them in its
registry record when it starts, and a run copies its lane's at firing. The broker answers for
itself: Redis in `INFO server`, RabbitMQ in the `server_properties` of connection.start.
"""

from __future__ import annotations

import importlib.metadata
import logging

log = logging.getLogger(__name__)

# distribution name -> the key a run and a page show it under
LIBRARIES = {"celery": "celery", "kombu": "kombu", "amqp": "amqp", "redis": "redis-py"}


def library_versions() -> dict[str, str]:
    """The Celery stack installed in this process (the worker's, when the worker calls it)."""
    found = {}
    for dist, key in LIBRARIES.items():
        try:
            found[key] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            found[key] = ""
    return found


def redis_server_version(url: str) -> str:
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
    try:
        return str(client.info("server").get("redis_version", ""))
    finally:
        client.close()


def rabbit_server_version(url: str) -> str:
    from kombu import Connection

    with Connection(url, connect_timeout=2) as conn:
        # a refusal is the answer: no retry, which would sleep 2 s first
        conn.ensure_connection(max_retries=0, timeout=2)
        properties = conn.connection.server_properties or {}
    version = properties.get("version", "")
    return version.decode() if isinstance(version, bytes) else str(version)


def broker_versions(*, kind: str, url: str) -> dict[str, str]:
    """{"redis": "7.0.15"} or {"rabbitmq": "3.10.8"}; empty when the broker does not answer
    (the record says nothing rather than a guess)."""
    try:
        if kind == "redis":
            return {"redis": redis_server_version(url)}
        return {"rabbitmq": rabbit_server_version(url)}
    except Exception as exc:  # noqa: BLE001 - a broker away now is reported by the lane status
        log.warning("could not read the %s server version: %s", kind, exc)
        return {}


def worker_versions(*, lane) -> dict[str, str]:
    """What a lab worker records about itself at start: broker server, libraries, pool."""
    return {
        **broker_versions(kind=lane.kind, url=lane.broker_url),
        **library_versions(),
        "pool": lane.pool,
    }


def versions_text(versions: dict | None) -> str:
    """One line for a page: "Redis 7.0.15 · celery 5.7.0 · kombu 5.7.0 · …"."""
    if not versions:
        return ""
    names = {"redis": "Redis", "rabbitmq": "RabbitMQ"}
    parts = [f"{names[k]} {versions[k]}" for k in names if versions.get(k)]
    parts += [f"{key} {versions[key]}" for key in LIBRARIES.values() if versions.get(key)]
    if versions.get("pool"):
        parts.append(f"{versions['pool']} pool")
    return " · ".join(parts)

"""The app's own Redis database (settings.REDIS_DB_APP): guard keys, counters, rate limits,
the worker registry. One client per process; redis-py pools its connections."""

from __future__ import annotations

import functools

import redis
from django.conf import settings


@functools.cache
def _client(url: str, db: int) -> redis.Redis:
    return redis.Redis.from_url(
        f"{url}/{db}", socket_connect_timeout=2, socket_timeout=5, decode_responses=True
    )


def app_redis() -> redis.Redis:
    return _client(settings.REDIS_URL, settings.REDIS_DB_APP)


_async_clients: dict = {}


def async_app_redis():
    """An asyncio client of the app database, one per event loop (server-side readers)."""
    import asyncio

    import redis.asyncio

    loop = asyncio.get_running_loop()
    client = _async_clients.get(id(loop))
    if client is None or _async_clients.get(("loop", id(loop))) is not loop:
        client = redis.asyncio.Redis.from_url(
            f"{settings.REDIS_URL}/{settings.REDIS_DB_APP}",
            socket_connect_timeout=2,
            decode_responses=True,
        )
        _async_clients[id(loop)] = client
        _async_clients[("loop", id(loop))] = loop
    return client

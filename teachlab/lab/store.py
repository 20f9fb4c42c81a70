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

"""Per-seat frame budget in Redis (settings.REDIS_DB_APP), shared by every server process."""

from __future__ import annotations

import asyncio
import secrets
import time
import weakref

import redis.asyncio as aioredis
from django.conf import settings

WINDOW_SECONDS = 10
# Voting, changing a vote and guessing take a handful of frames; a script takes hundreds.
PARTICIPANT_FRAMES = getattr(settings, "WORKSHOP_FRAMES_PER_WINDOW", 20)
PRESENTER_FRAMES = 200

_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _client() -> aioredis.Redis:
    """One client per event loop: a redis.asyncio connection cannot cross loops."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = aioredis.Redis.from_url(f"{settings.REDIS_URL}/{settings.REDIS_DB_APP}")
        _clients[loop] = client
    return client


async def frame_allowed(*, who: str, limit: int) -> bool:
    """Sliding window: a sorted set of this sender's frame times over the last window.

    A refused frame is not recorded, so a sender who stops is let through again as soon
    as their oldest frame leaves the window.
    """
    now = time.time()
    key = f"workshop:frames:{who}"
    pipe = _client().pipeline(transaction=True)
    pipe.zremrangebyscore(key, 0, now - WINDOW_SECONDS)
    pipe.zcard(key)
    _, count = await pipe.execute()
    if count >= limit:
        return False
    pipe = _client().pipeline(transaction=True)
    pipe.zadd(key, {f"{now:.6f}:{secrets.token_hex(3)}": now})
    pipe.expire(key, WINDOW_SECONDS + 1)
    await pipe.execute()
    return True

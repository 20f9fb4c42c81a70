"""Per-seat frame budget in Redis (settings.REDIS_DB_APP), shared by every server process."""

from __future__ import annotations

import asyncio
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
    """Fixed window counter: INCR and EXPIRE in one round trip."""
    window = int(time.time() // WINDOW_SECONDS)
    key = f"workshop:frames:{who}:{window}"
    pipe = _client().pipeline(transaction=False)
    pipe.incr(key)
    pipe.expire(key, WINDOW_SECONDS * 2)
    count, _ = await pipe.execute()
    return int(count) <= limit

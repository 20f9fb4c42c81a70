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
# A whole room answers within a second or two: frames wait for one of these connections
# rather than failing when the pool is momentarily empty.
POOL_SIZE = 20

# Sliding window in one round trip: drop frames older than the window, refuse when the
# budget is spent (a refused frame is not recorded), else record this one.
SLIDING_WINDOW = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]) + 1)
return 1
"""

_scripts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _script():
    """One client per event loop: a redis.asyncio connection cannot cross loops."""
    loop = asyncio.get_running_loop()
    script = _scripts.get(loop)
    if script is None:
        pool = aioredis.BlockingConnectionPool.from_url(
            f"{settings.REDIS_URL}/{settings.REDIS_DB_APP}", max_connections=POOL_SIZE, timeout=5
        )
        script = aioredis.Redis(connection_pool=pool).register_script(SLIDING_WINDOW)
        _scripts[loop] = script
    return script


async def frame_allowed(*, who: str, limit: int) -> bool:
    """True when `who` has sent fewer than `limit` frames in the last WINDOW_SECONDS."""
    now = time.time()
    member = f"{now:.6f}:{secrets.token_hex(3)}"
    allowed = await _script()(
        keys=[f"workshop:frames:{who}"], args=[now, WINDOW_SECONDS, limit, member]
    )
    return bool(allowed)

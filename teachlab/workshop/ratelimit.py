"""Frame budgets and the join throttle, in Redis (settings.REDIS_DB_APP), shared by every
server process.

A participant's frame spends from two budgets at once: its seat's and its room's. Without
the room's, fifty scripted seats would get fifty budgets; with it, the whole room shares a
ceiling sized for a real class answering together (settings.WORKSHOP_ROOM_FRAMES_PER_WINDOW).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
import weakref

import redis
import redis.asyncio as aioredis
from django.conf import settings

from teachlab.lab.store import app_redis

log = logging.getLogger(__name__)

WINDOW_SECONDS = 10
# Voting, changing a vote and guessing take a handful of frames; a script takes hundreds.
PARTICIPANT_FRAMES = getattr(settings, "WORKSHOP_FRAMES_PER_WINDOW", 20)
PRESENTER_FRAMES = 200
# Every participant of one room together, per WINDOW_SECONDS: 300 seats voting and then
# guessing within ten seconds send about 600 frames (scripts/bench_workshop.py).
ROOM_FRAMES = getattr(settings, "WORKSHOP_ROOM_FRAMES_PER_WINDOW", 1000)
# A whole room answers within a second or two: frames wait for one of these connections
# rather than failing when the pool is momentarily empty.
POOL_SIZE = 20

# Sliding windows in one round trip, over one or more keys (a seat's and its room's): drop
# frames older than the window from each; when any is full, refuse and say which (1-based);
# else record this frame in all of them and return 0. A refused frame is not recorded.
SLIDING_WINDOW = """
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, 0, tonumber(ARGV[1]) - tonumber(ARGV[2]))
  if redis.call('ZCARD', key) >= tonumber(ARGV[3 + i]) then return i end
end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[1], ARGV[3])
  redis.call('EXPIRE', key, tonumber(ARGV[2]) + 1)
end
return 0
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


def _args(limits: list[int], window: float) -> list:
    now = time.time()
    return [now, window, f"{now:.6f}:{secrets.token_hex(3)}", *limits]


async def frames_spend(budgets: list[tuple[str, int]]) -> int:
    """Spend one frame from each (who, limit) budget over WINDOW_SECONDS: 0 when allowed,
    else the 1-based index of the first budget that is spent (nothing is recorded then)."""
    keys = [f"workshop:frames:{who}" for who, _ in budgets]
    args = _args([limit for _, limit in budgets], WINDOW_SECONDS)
    return int(await _script()(keys=keys, args=args))


async def frame_allowed(*, who: str, limit: int) -> bool:
    """True when `who` has sent fewer than `limit` frames in the last WINDOW_SECONDS."""
    return await frames_spend([(who, limit)]) == 0


def join_wait(*, address: str) -> int:
    """Seconds until this address may join a room again: 0 when it may now, or when the
    throttle is off (settings.WORKSHOP_JOINS_PER_ADDRESS = 0, the default: a classroom
    often shares one address behind its router).

    When the app's Redis does not answer, the join goes ahead (and is logged): the seat cap
    still bounds a room, and a class should not be locked out by a Redis hiccup.
    """
    limit = getattr(settings, "WORKSHOP_JOINS_PER_ADDRESS", 0)
    window = getattr(settings, "WORKSHOP_JOIN_WINDOW_SECONDS", 60)
    if limit <= 0:
        return 0
    # Hashed: an address is the client's to choose (an IPv6 one, a proxy's header).
    key = "workshop:joins:" + hashlib.sha256((address or "unknown").encode()).hexdigest()[:32]
    try:
        client = app_redis()
        if client.register_script(SLIDING_WINDOW)(keys=[key], args=_args([limit], window)) == 0:
            return 0
        oldest = client.zrange(key, 0, 0, withscores=True)
    except redis.RedisError as exc:
        log.warning("workshop join throttle not checked, Redis does not answer: %s", exc)
        return 0
    since = oldest[0][1] if oldest else time.time()
    return max(1, int(since + window - time.time()) + 1)

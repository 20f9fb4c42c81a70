"""Who is in the room right now: one entry per open participant socket, kept in Redis.

Kept in Redis (settings.REDIS_DB_APP), not in a process's memory, so the count is the same
whichever server process a socket landed on. Each entry is a sorted-set member
"<seat id>:<socket key>" scored by when it expires: a socket's process refreshes it every
HEARTBEAT_SECONDS and removes it when the socket closes, so a process that dies without
closing its sockets stops counting after TTL_SECONDS at the latest. A seat with two tabs
open counts once.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
import weakref

import redis
import redis.asyncio as aioredis
from django.conf import settings

from teachlab.core.ratelimits import waiting_pool

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 20
TTL_SECONDS = 60


def presence_key(room_id: int) -> str:
    return f"workshop:presence:{room_id}"


# --- written from the sockets' event loop ---

_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# This process's open entries, per event loop: {(room id, member)}, refreshed by one task.
_local: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_beats: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def app_redis() -> aioredis.Redis:
    """One client per event loop: a redis.asyncio connection cannot cross loops."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        url = f"{settings.REDIS_URL}/{settings.REDIS_DB_APP}"
        client = aioredis.Redis(connection_pool=waiting_pool(url))
        _clients[loop] = client
    return client


async def presence_enter(*, room_id: int, seat_id: int, socket_key: str) -> None:
    member = f"{seat_id}:{socket_key}"
    key = presence_key(room_id)
    async with app_redis().pipeline(transaction=False) as pipe:
        pipe.zadd(key, {member: time.time() + TTL_SECONDS})
        pipe.expire(key, TTL_SECONDS * 2)
        await pipe.execute()
    loop = asyncio.get_running_loop()
    _local.setdefault(loop, set()).add((room_id, member))
    beat = _beats.get(loop)
    if beat is None or beat.done():
        _beats[loop] = asyncio.create_task(_heartbeat(), name="workshop-presence")


async def presence_leave(*, room_id: int, seat_id: int, socket_key: str) -> None:
    member = f"{seat_id}:{socket_key}"
    entries = _local.get(asyncio.get_running_loop())
    if entries is not None:
        entries.discard((room_id, member))
    await app_redis().zrem(presence_key(room_id), member)


async def _heartbeat() -> None:
    """Push this process's entries' expiry forward while any socket is open."""
    loop = asyncio.get_running_loop()
    while _local.get(loop):
        await asyncio.sleep(HEARTBEAT_SECONDS)
        entries = list(_local.get(loop) or ())
        if not entries:
            break
        expires = time.time() + TTL_SECONDS
        try:
            async with app_redis().pipeline(transaction=False) as pipe:
                for room_id, member in entries:
                    # XX: never bring back an entry its socket's disconnect already removed.
                    pipe.zadd(presence_key(room_id), {member: expires}, xx=True)
                    pipe.expire(presence_key(room_id), TTL_SECONDS * 2)
                await pipe.execute()
        except Exception:  # noqa: BLE001 - a Redis hiccup: try again at the next beat
            log.warning("workshop presence heartbeat failed", exc_info=True)
    with contextlib.suppress(KeyError):
        del _beats[loop]


# --- read while rendering (a thread of its own) ---


@functools.cache
def _sync_client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=2)


def present_seats(room_id: int) -> set[int] | None:
    """The ids of the seats with an open socket now, or None when Redis cannot be asked
    (the screens then say they do not know rather than show a wrong number)."""
    key = presence_key(room_id)
    try:
        pipe = _sync_client(f"{settings.REDIS_URL}/{settings.REDIS_DB_APP}").pipeline(
            transaction=False
        )
        pipe.zremrangebyscore(key, "-inf", time.time())
        pipe.zrange(key, 0, -1)
        _, members = pipe.execute()
    except redis.RedisError:
        log.warning("workshop presence unavailable", exc_info=True)
        return None
    seats = set()
    for member in members:
        seat, _, _ = member.decode().partition(":")
        if seat.isdigit():
            seats.add(int(seat))
    return seats

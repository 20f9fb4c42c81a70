"""Every rate limit of the app, on one kept library (`limits`, moving windows, in the app's
Redis so every server process shares the count): lab runs, worker controls, progress
imports, workshop frames and joins, sign-up, the run socket's resync. Sign-in failures are
django-axes' job (settings.AXES_*).

A budget is a name, an amount and a window; who spends it is a list of strings (a learner's
key, a network, "class"). The keys in Redis start with settings.RATELIMIT_KEY_PREFIX, so the
tests can clear them between tests.
"""

from __future__ import annotations

import asyncio
import math
import time
import weakref
from dataclasses import dataclass
from functools import cache

import redis.asyncio as aioredis
from django.conf import settings
from limits import RateLimitItemPerSecond
from limits.aio.storage import RedisStorage as AsyncRedisStorage
from limits.aio.strategies import MovingWindowRateLimiter as AsyncMovingWindow
from limits.storage import RedisStorage
from limits.strategies import MovingWindowRateLimiter


@dataclass(frozen=True)
class Budget:
    """`amount` actions per `seconds`, counted per name and spender."""

    name: str
    amount: int
    seconds: int

    @property
    def item(self) -> RateLimitItemPerSecond:
        return RateLimitItemPerSecond(max(1, self.amount), self.seconds, namespace=self.name)


class RateLimited(Exception):
    """str() is a message fit for the person refused; `wait` is seconds until a try succeeds."""

    def __init__(self, message: str, *, wait: int) -> None:
        super().__init__(message)
        self.wait = wait


# redis-py's asyncio pool holds at most 100 connections and refuses the 101st at once
# (MaxConnectionsError): a workshop room of 300 answering in the same instant had 200 of its
# frames refused as "the server is busy". A blocking pool makes the rest wait their turn.
POOL_CONNECTIONS = 100
POOL_WAIT_SECONDS = 10


def waiting_pool(url: str) -> aioredis.BlockingConnectionPool:
    """An asyncio connection pool that waits for a free connection instead of failing."""
    return aioredis.BlockingConnectionPool.from_url(
        url, max_connections=POOL_CONNECTIONS, timeout=POOL_WAIT_SECONDS, socket_connect_timeout=2
    )


def _url() -> str:
    return f"{settings.REDIS_URL}/{settings.REDIS_DB_APP}"


@cache
def _limiter(url: str) -> MovingWindowRateLimiter:
    storage = RedisStorage(
        url,
        key_prefix=settings.RATELIMIT_KEY_PREFIX,
        socket_connect_timeout=2,
        socket_timeout=5,
    )
    return MovingWindowRateLimiter(storage)


def limiter() -> MovingWindowRateLimiter:
    return _limiter(_url())


_async_limiters: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def async_limiter() -> AsyncMovingWindow:
    """One per event loop and URL: a redis.asyncio connection cannot cross loops."""
    loop = asyncio.get_running_loop()
    per_loop = _async_limiters.setdefault(loop, {})
    url = _url()
    if url not in per_loop:
        storage = AsyncRedisStorage(
            "async+" + url,
            implementation="redispy",
            key_prefix=settings.RATELIMIT_KEY_PREFIX,
            connection_pool=waiting_pool(url),
        )
        per_loop[url] = AsyncMovingWindow(storage)
    return per_loop[url]


def _wait(reset_time: float) -> int:
    return max(1, math.ceil(reset_time - time.time()))


def spend(budget: Budget, *who: str, cost: int = 1) -> int:
    """Spend `cost` from `budget` for `who`: 0 when allowed, else seconds until it would be.
    Nothing is spent when refused. Redis errors propagate: each caller decides whether a
    limit it cannot check lets the action through."""
    if budget.amount <= 0:
        return 0
    if limiter().hit(budget.item, *who, cost=cost):
        return 0
    return wait_for(budget, *who)


def spend_or_raise(budget: Budget, *who: str, message: str, cost: int = 1) -> None:
    """spend(), raising RateLimited with `message` (formatted with {wait}) when refused."""
    wait = spend(budget, *who, cost=cost)
    if wait:
        raise RateLimited(message.format(wait=wait, amount=budget.amount), wait=wait)


def spend_all(budgets: list[tuple]) -> int:
    """Spend from several budgets at once: 0 when all allowed, else the 1-based index of the
    first that is spent. Each entry is (budget, who) or (budget, who, cost). Each is tested
    before any is hit, so a refused action costs nothing (two racing requests may both pass
    the test: one action over a limit, at most)."""
    lim = limiter()
    entries = [(budget, who, rest[0] if rest else 1) for budget, who, *rest in budgets]
    for index, (budget, who, cost) in enumerate(entries, start=1):
        if budget.amount > 0 and not lim.test(budget.item, *who, cost=cost):
            return index
    for index, (budget, who, cost) in enumerate(entries, start=1):
        if budget.amount > 0 and not lim.hit(budget.item, *who, cost=cost):
            return index
    return 0


async def aspend_all(budgets: list[tuple[Budget, tuple[str, ...]]]) -> int:
    """spend_all() for the event loop (workshop frames, socket actions)."""
    lim = async_limiter()
    for index, (budget, who) in enumerate(budgets, start=1):
        if budget.amount > 0 and not await lim.test(budget.item, *who):
            return index
    for index, (budget, who) in enumerate(budgets, start=1):
        if budget.amount > 0 and not await lim.hit(budget.item, *who):
            return index
    return 0


def wait_for(budget: Budget, *who: str) -> int:
    """Seconds until `who` may spend from `budget` again (1 at least)."""
    return _wait(limiter().get_window_stats(budget.item, *who).reset_time)


def remaining(budget: Budget, *who: str) -> int:
    return limiter().get_window_stats(budget.item, *who).remaining


def clear_all() -> int:
    """Forget every count (tests; an instructor resetting a room). Returns keys removed."""
    client = limiter().storage.get_connection()
    keys = list(client.scan_iter(f"{settings.RATELIMIT_KEY_PREFIX}:*", count=1000))
    if keys:
        client.delete(*keys)
    return len(keys)

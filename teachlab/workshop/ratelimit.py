"""The workshop's budgets on the app's one limiter (teachlab/core/ratelimits.py): frames per socket
and per room, and joins per client network.

A participant's frame spends from two budgets at once: its seat's and its room's. Without
the room's, fifty scripted seats would get fifty budgets; with it, the whole room shares a
ceiling sized for a real class answering together (settings.WORKSHOP_ROOM_FRAMES_PER_WINDOW).
"""

from __future__ import annotations

import logging

import redis
from django.conf import settings

from teachlab.core import ratelimits
from teachlab.core.identity import network_of

log = logging.getLogger(__name__)

WINDOW_SECONDS = 10
# Voting, changing a vote and guessing take a handful of frames; a script takes hundreds.
PARTICIPANT_FRAMES = getattr(settings, "WORKSHOP_FRAMES_PER_WINDOW", 20)
PRESENTER_FRAMES = 200
# Every participant of one room together, per WINDOW_SECONDS: 300 seats voting and then
# guessing within ten seconds send about 600 frames (scripts/bench_workshop.py).
ROOM_FRAMES = getattr(settings, "WORKSHOP_ROOM_FRAMES_PER_WINDOW", 1000)


async def frames_spend(budgets: list[tuple[str, int]]) -> int:
    """Spend one frame from each (who, limit) budget over WINDOW_SECONDS: 0 when allowed,
    else the 1-based index of the first budget that is spent (nothing is spent then)."""
    return await ratelimits.aspend_all(
        [
            (ratelimits.Budget("workshop-frames", limit, WINDOW_SECONDS), (who,))
            for who, limit in budgets
        ]
    )


def join_wait(*, address: str) -> int:
    """Seconds until this client network may join a room again (0: now, or the throttle is
    off with settings.WORKSHOP_JOINS_PER_ADDRESS = 0). The default lets a class of forty
    behind one router join at once and stops a script filling a room's seats.

    When the app's Redis does not answer, the join goes ahead (and is logged): the seat cap
    still bounds a room, and a class should not be locked out by a Redis hiccup.
    """
    budget = ratelimits.Budget(
        "workshop-joins", settings.WORKSHOP_JOINS_PER_ADDRESS, settings.WORKSHOP_JOIN_WINDOW_SECONDS
    )
    try:
        return ratelimits.spend(budget, network_of(address))
    except redis.RedisError as exc:
        log.warning("workshop join throttle not checked, Redis does not answer: %s", exc)
        return 0

"""A participant's action is acted on once, however often it arrives.

The page gives each vote, answer and prediction an id of its own (static/js/ws-pending.js),
keeps it until the server acknowledges that id, and sends it again after a reconnect: a frame
sent into a silently cut socket is otherwise lost (issue 28's walk). The same frame can then
arrive twice, the resend and the original held up in the cut connection, in either order and
on different server processes, so the first copy claims the id in Redis and is acted on; a
later copy changes nothing and is answered with the first one's outcome. An action made
before one already applied to the same thing (a vote held up in the cut connection, delivered
after the vote that replaced it) is not applied either: the page stamps each with its time.
"""

from __future__ import annotations

import asyncio
import json
import time

from teachlab.workshop.presence import app_redis

KEEP_SECONDS = 3600  # longer than any reconnect a page keeps trying
IN_FLIGHT = "pending"
OK, REFUSED = "ok", "refused"


def _key(seat_id: int, aid: str) -> str:
    return f"workshop:action:{seat_id}:{aid}"


async def action_claim(*, seat_id: int, aid: str) -> str | None:
    """None when this copy is the first (act on it), else the first copy's outcome: OK,
    REFUSED + a line with the reason, or IN_FLIGHT when it is still being stored."""
    key = _key(seat_id, aid)
    if await app_redis().set(key, IN_FLIGHT, nx=True, ex=KEEP_SECONDS):
        return None
    return await _outcome(key)


async def _outcome(key: str, wait: float = 5.0) -> str:
    """The first copy's outcome, waiting while it is still being stored elsewhere."""
    deadline = time.monotonic() + wait
    while True:
        value = await app_redis().get(key)
        state = value.decode() if value else IN_FLIGHT  # released: the page sends it again
        if state != IN_FLIGHT or time.monotonic() > deadline:
            return state
        await asyncio.sleep(0.05)


async def action_settle(*, seat_id: int, aid: str, refusal: str | None = None) -> None:
    outcome = OK if refusal is None else f"{REFUSED}\n{refusal}"
    await app_redis().set(_key(seat_id, aid), outcome, ex=KEEP_SECONDS)


async def action_release(*, seat_id: int, aid: str) -> None:
    """Nothing was stored (the database failed): the next copy may try again."""
    await app_redis().delete(_key(seat_id, aid))


# Set the newest time for a target unless a newer (or the same) one is there already.
_NEWER = """
local seen = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) <= seen then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
"""


async def action_is_newest(*, seat_id: int, target: str, at: int) -> bool:
    """False when the seat already applied a later action to `target` (e.g. "vote:12")."""
    key = f"workshop:action-newest:{seat_id}:{target}"
    return bool(await app_redis().eval(_NEWER, 1, key, at, KEEP_SECONDS))


def ack_frame(aid: str, *, ok: bool, message: str = "") -> str:
    """A JSON control frame for the page's script; htmx never swaps it."""
    return json.dumps({"ack": aid, "ok": ok, "message": message})

"""The console's and the projector's live counts (connected, answered of those present,
answers in, the spread), redrawn once per burst of joins, leaves, votes and answers."""

from __future__ import annotations

import asyncio
import time

from channels.layers import get_channel_layer

from teachlab.core.dbasync import db_redraw
from teachlab.core.socketnames import room_group
from teachlab.workshop.models import Room
from teachlab.workshop.screens import counts_html

# As broadcast.PRESENTER_REFRESH_SECONDS: a whole room joins or votes within seconds, and
# one redraw per burst is enough for a count.
REFRESH_SECONDS = 0.15
_pending: dict[tuple[int, int], asyncio.Task] = {}


async def counts_refresh_soon(*, room_id: int) -> None:
    key = (id(asyncio.get_running_loop()), room_id)
    task = _pending.get(key)
    if task is None or task.done():
        _pending[key] = asyncio.create_task(_refresh_later(key, room_id))


async def _refresh_later(key, room_id: int) -> None:
    await asyncio.sleep(REFRESH_SECONDS)
    # Let go of the slot before reading, so a change stored after the read asks again.
    _pending.pop(key, None)
    html = await db_redraw(_render, room_id)
    if html is None:
        return
    message = {"type": "room.push", "participant": "", "at": time.time(), **html}
    await get_channel_layer().group_send(room_group(room_id), message)


def _render(room_id: int) -> dict | None:
    room = Room.objects.filter(pk=room_id).first()
    if room is None or not room.is_open:
        return None
    return counts_html(room)

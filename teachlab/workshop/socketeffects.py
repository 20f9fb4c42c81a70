"""What a room socket sets off beyond itself: the frame budget a frame spends before it is
read, the console's redraws after it is acted on, and a seat counted in or out of the room."""

from __future__ import annotations

import logging

from teachlab.workshop import broadcast, livecounts, presence, ratelimit

log = logging.getLogger(__name__)

REFRESHES = {"predict": "spread", "answer": "answers"}  # what the presenter redraws after each
COUNTED = {"vote", "predict", "answer"}  # what changes the live counts (livecounts.py)


async def frame_refusal(budgets: list[tuple[str, int]]) -> str:
    """Why a frame is refused before it is read, or "" to go ahead; `budgets` are the
    (who, frames per window) it spends from, the socket's own first."""
    try:
        spent = await ratelimit.frames_spend(budgets)
    except Exception:  # noqa: BLE001 - no budget check, no frame: refuse rather than trust
        log.warning("workshop rate limit unavailable", exc_info=True)
        return "The server is busy; send that again in a moment."
    if spent == 0:
        return ""
    if spent == 1:
        return "Too many messages; wait a moment."
    return "The whole room is sending too many messages at once; send that again in a few seconds."


async def frame_acted(*, room_id: int, action: str) -> None:
    """Redraw what an accepted frame changed on the console and the projector, once per burst."""
    if action in REFRESHES:
        await broadcast.presenter_refresh_soon(room_id=room_id, part=REFRESHES[action])
    if action in COUNTED:
        await livecounts.counts_refresh_soon(room_id=room_id)


async def seat_presence_change(
    *, room_id: int, seat_id: int, socket_key: str, entering: bool
) -> None:
    """Count a participant's socket in or out of the room (presence.py), then the counts."""
    change = presence.presence_enter if entering else presence.presence_leave
    try:
        await change(room_id=room_id, seat_id=seat_id, socket_key=socket_key)
    except Exception:  # noqa: BLE001 - presence is a count on a screen, not the room
        log.warning("workshop presence not recorded", exc_info=True)
        return
    await livecounts.counts_refresh_soon(room_id=room_id)

"""A participant socket's frame acted on once, however often it arrives (actionids.py says
why a frame comes twice, and in which order)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from teachlab.workshop import actionids
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.frames import Frame

log = logging.getLogger(__name__)


async def action_once(
    *,
    seat_id: int,
    frame: Frame,
    act: Callable[[Frame], Awaitable[str]],
    state: Callable[[], Awaitable[str]],
) -> str | None:
    """`act(frame)` for the first copy of an action. A copy of an action already taken, or
    one older than an action already applied to the same thing, changes nothing: the page
    gets the seat's state as it is now, `state()` (and the first copy's refusal, if it was
    refused); None while the first copy is still being stored, so the page keeps it pending."""
    if not frame.aid:
        return await act(frame)
    ids = {"seat_id": seat_id, "aid": frame.aid}
    try:
        first = await actionids.action_claim(**ids)
    except Exception:  # noqa: BLE001 - votes, answers and guesses are upserts: act anyway
        log.warning("workshop action ids unavailable", exc_info=True)
        return await act(frame)
    if first == actionids.IN_FLIGHT:
        return None
    if first is not None:
        kind, _, refusal = first.partition("\n")
        if kind == actionids.REFUSED:
            raise WorkshopError(refusal)
        return await state()
    if not await _newest(seat_id, frame):
        await actionids.action_settle(**ids)  # taken, and replaced by the later one
        return await state()
    return await _act_and_settle(ids, frame, act)


async def _newest(seat_id: int, frame: Frame) -> bool:
    """False when the seat already applied a later action to the same round or run."""
    target = f"{frame.action}:{frame.fields.get('round') or frame.fields.get('run')}"
    try:
        return not frame.at or await actionids.action_is_newest(
            seat_id=seat_id, target=target, at=frame.at
        )
    except Exception:  # noqa: BLE001 - as with the ids: act on it
        log.warning("workshop action times unavailable", exc_info=True)
        return True


async def _act_and_settle(ids: dict, frame: Frame, act) -> str:
    """Act, then record the outcome under the action's id; nothing stored frees the id."""
    try:
        html = await act(frame)
    except WorkshopError as exc:
        await actionids.action_settle(**ids, refusal=exc.message)
        raise
    except BaseException:
        await actionids.action_release(**ids)
        raise
    await actionids.action_settle(**ids)
    return html

"""Send the room's screens their new HTML through the channel layer, after the commit.

A message carries one rendering per role: every participant gets `participant`, every
presenter gets `presenter`; either may be empty. The per-process hub fans it out.
"""

from __future__ import annotations

import asyncio
import time

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.db import transaction

from teachlab.workshop import fragments, predictions, screens, votes


def room_group(room_id: int) -> str:
    return f"workshop.room.{room_id}"


def send(room, *, participant: str = "", presenter: str = "", screen: str = "", **extra) -> None:
    message = {
        "type": "room.push",
        "participant": participant,
        "presenter": presenter,
        "screen": screen,  # the projector view (screens.py)
        "at": time.time(),
        **extra,
    }
    group = room_group(room.pk)

    def push() -> None:
        layer = get_channel_layer()
        if layer is not None:
            async_to_sync(layer.group_send)(group, message)

    transaction.on_commit(push, robust=True)  # a lost broadcast must not undo the change


def stage_changed(*, room) -> None:
    send(
        room,
        participant=fragments.participant_html(room, ["stage", "banner"]),
        presenter=fragments.presenter_html(room, ["stage", "claims"]),
        # The projector drops a revealed claim or ended answer round of another question.
        screen=screens.screen_html(room, ["stage", "claim", "answers"]),
    )


def claim_changed(*, room) -> None:
    send(
        room,
        participant=fragments.participant_html(room, ["claim"]),
        presenter=fragments.presenter_html(room, ["claim"]),
        screen=screens.screen_html(room, ["claim", "answers"]),
    )


def presenter_seats_changed(*, room) -> None:
    send(room, presenter=fragments.render_parts(fragments.PRESENTER, ["seats"], {"room": room}))


# Votes and guesses come in bursts (a whole room answers within seconds): the presenter's
# count and spread are redrawn at most this often, not once per participant.
PRESENTER_REFRESH_SECONDS = 0.15
_refreshing: dict[tuple[int, int, str], asyncio.Task] = {}


async def presenter_refresh_soon(*, room_id: int, part: str) -> None:
    """Redraw a presenter-only part ("answered" or "spread") shortly, once for a burst."""
    key = (id(asyncio.get_running_loop()), room_id, part)
    task = _refreshing.get(key)
    if task is None or task.done():
        _refreshing[key] = asyncio.create_task(_refresh_later(key, room_id, part))


async def _refresh_later(key, room_id: int, part: str) -> None:
    await asyncio.sleep(PRESENTER_REFRESH_SECONDS)
    # Let go of the slot before reading, so an answer stored after the read asks again.
    _refreshing.pop(key, None)
    html = await database_sync_to_async(presenter_part)(room_id=room_id, part=part)
    message = {"type": "room.push", "participant": "", "presenter": html, "at": time.time()}
    await get_channel_layer().group_send(room_group(room_id), message)


def presenter_part(*, room_id: int, part: str) -> str:
    from teachlab.workshop.models import Room

    room = Room.objects.select_related("claim_round", "shared_run").get(pk=room_id)
    if part == "answered" and room.claim_round is not None:
        ctx = {
            "room": room,
            "claim_round": room.claim_round,
            "tally": votes.tally(room.claim_round),
        }
    elif part == "spread" and room.shared_run is not None:
        ctx = {
            "room": room,
            "shared": room.shared_run,
            "spread": predictions.spread(room.shared_run),
        }
    else:
        return ""
    return fragments.render_parts(fragments.PRESENTER, [part], ctx)


def run_changed(*, room) -> None:
    shared = room.shared_run
    if shared is not None and shared.observed is not None:
        parts = ["outcome"]
    else:
        parts = ["run"]
    send(
        room,
        participant=fragments.participant_html(room, parts),
        presenter=fragments.presenter_html(room, parts),
        screen=screens.screen_html(room, parts),
        run_id=shared.run_id if shared is not None else "",
    )


def follow_run(*, room, run_id: str) -> None:
    """Ask every hub of the room to join the run's group (no screen changes)."""
    group = room_group(room.pk)

    def push() -> None:
        layer = get_channel_layer()
        if layer is not None:
            async_to_sync(layer.group_send)(group, {"type": "room.follow", "run_id": run_id})

    transaction.on_commit(push, robust=True)  # a lost broadcast must not undo the change


def room_closed(*, room) -> None:
    send(
        room,
        participant=fragments.participant_html(room, ["ended"]),
        presenter=fragments.presenter_html(room, ["ended"]),
        screen=screens.screen_html(room, ["ended"]),
        close=True,
    )

"""Send the room's screens their new HTML through the channel layer, after the commit.

A message carries one rendering per role: every participant gets `participant`, every
presenter gets `presenter`; either may be empty. The per-process hub fans it out. `personal`
asks each hub to follow up with each seat's own parts (fragments.personal_html: "you voted
right", "your place"); `seat_id` narrows the participant part to one seat's sockets, and
with `close` ends them (a removed seat).
"""

from __future__ import annotations

import asyncio
import time

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from teachlab.core.dbasync import db_redraw
from teachlab.core.socketnames import room_group
from teachlab.workshop import fragments, screens, selectors
from teachlab.workshop.models import Room


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
    revealed = room.claim_round is not None and room.claim_round.revealed_at is not None
    board = revealed and room.leaderboard
    send(
        room,
        participant=fragments.participant_html(room, ["claim"]) + _board(room, board),
        presenter=fragments.presenter_html(room, ["claim"]) + _board(room, board),
        screen=screens.screen_html(room, ["claim", "answers"]),
        personal=["claim"] if revealed else [],
    )


def _board(room, shown: bool) -> str:
    return fragments.scores_html(room, ["leaderboard"]) if shown else ""


def presenter_seats_changed(*, room) -> None:
    """Ask each process's room hub to redraw its presenters' seat list and moderation status.
    A class arriving is 100 joins in a minute: the list is drawn once per burst, by the hubs
    that have a presenter, not in every join's request (it held 300 names, 8 ms a drawing)."""
    send_refresh(room, part="seats")


def send_refresh(room, *, part: str) -> None:
    """A presenter-only part to redraw soon (RoomHub.refresh_soon, presenter_part)."""
    message = {"type": "room.refresh", "part": part}
    group = room_group(room.pk)

    def push() -> None:
        layer = get_channel_layer()
        if layer is not None:
            async_to_sync(layer.group_send)(group, message)

    transaction.on_commit(push, robust=True)


def moderation_changed(*, room) -> None:
    """The console's lock and leaderboard switches; the projector's "joins closed"."""
    send(
        room,
        presenter=fragments.moderation_html(room, ["status"]),
        screen=screens.screen_html(room, ["joinstate"]),
    )


def leaderboard_changed(*, room) -> None:
    """The leaderboard on every screen; on the projector it is the whole slide."""
    html = fragments.scores_html(room, ["leaderboard"])
    send(
        room,
        participant=html + fragments.participant_html(room, ["moment"]),
        presenter=html + fragments.presenter_html(room, ["now"]),
        screen=screens.screen_html(room, ["board"]),
        personal=["score"],
    )


def blank_changed(*, room) -> None:
    """The console's B key: the projector blanks (or comes back); the cockpit says so."""
    send(
        room,
        presenter=fragments.presenter_html(room, ["now"]),
        screen=screens.screen_html(room, ["moment"]),
    )


def plan_moved(*, room) -> None:
    """A plan step applied: the console's plan panel, and the projector's podium past the
    last step (the step's own service told the screens everything else)."""
    send(
        room,
        participant=fragments.participant_html(room, ["moment"]),
        presenter=fragments.presenter_html(room, ["plan"]),
        screen=screens.screen_html(room, ["moment"]),
    )


def seat_removed(*, room, seat) -> None:
    """Close the removed seat's sockets (saying why), redraw the presenter's seat list and
    every ranking that showed the seat's name."""
    presenter_seats_changed(room=room)
    send(
        room,
        participant=fragments.render_parts(fragments.MODERATION, ["removed"], {"room": room}),
        seat_id=seat.pk,
        close=True,
    )
    names_changed(room=room)


def seat_renamed(*, room, seat) -> None:
    """The seat's own screens show the new name; the presenter's list and every ranking
    already drawn on any screen do too."""
    presenter_seats_changed(room=room)
    send(
        room,
        participant=fragments.render_parts(fragments.PARTICIPANT, ["me"], {"seat": seat}),
        seat_id=seat.pk,
    )
    names_changed(room=room)


def names_changed(*, room) -> None:
    """Redraw, on every screen, the parts that print participants' names: a run's outcome
    ("Closest: …" and its ranking) and the leaderboard. Without it a renamed "Butthead"
    stayed in every ranking already drawn until a reload."""
    room = Room.objects.select_related("claim_round", "shared_run", "answer_round").get(pk=room.pk)
    shared = room.shared_run
    outcome = shared is not None and shared.observed is not None
    if not outcome and not room.leaderboard:
        return
    parts = ["outcome"] if outcome else []
    personal = (["outcome"] if outcome else []) + (["score"] if room.leaderboard else [])
    send(
        room,
        participant=fragments.participant_html(room, parts) + _board(room, room.leaderboard),
        presenter=fragments.presenter_html(room, parts) + _board(room, room.leaderboard),
        screen=screens.screen_html(room, parts or ["board"]),
        personal=personal,
        names_changed=True,
    )


# Votes and guesses come in bursts (a whole room answers within seconds): the presenter's
# count and spread are redrawn at most this often, not once per participant.
PRESENTER_REFRESH_SECONDS = 0.15
_refreshing: dict[tuple[int, int, str], asyncio.Task] = {}


async def presenter_refresh_soon(*, room_id: int, part: str) -> None:
    """Redraw a presenter-only part ("answered", "spread") shortly, once for a burst."""
    key = (id(asyncio.get_running_loop()), room_id, part)
    task = _refreshing.get(key)
    if task is None or task.done():
        _refreshing[key] = asyncio.create_task(_refresh_later(key, room_id, part))


async def _refresh_later(key, room_id: int, part: str) -> None:
    await asyncio.sleep(PRESENTER_REFRESH_SECONDS)
    # Let go of the slot before reading, so an answer stored after the read asks again.
    _refreshing.pop(key, None)
    html = await db_redraw(presenter_part, room_id=room_id, part=part)
    if html is None:
        return
    message = {"type": "room.push", "participant": "", "presenter": html, "at": time.time()}
    await get_channel_layer().group_send(room_group(room_id), message)


def presenter_part(*, room_id: int, part: str) -> str:
    room = Room.objects.select_related("claim_round", "shared_run").get(pk=room_id)
    if part == "answered" and room.claim_round is not None:
        ctx = {
            "room": room,
            "claim_round": room.claim_round,
            "tally": selectors.tally(room.claim_round),
        }
    elif part == "spread" and room.shared_run is not None:
        ctx = {
            "room": room,
            "shared": room.shared_run,
            "spread": selectors.spread(room.shared_run),
        }
    elif part == "seats":
        return (
            fragments.render_parts(fragments.PRESENTER, ["seats"], {"room": room})
            + fragments.moderation_html(room, ["status"])
            + fragments.render_parts(
                fragments.PRESENTER, ["people"], fragments.presenter_context(room)
            )
        )
    elif part == "answers":
        # The open answers arriving live on the console (issue 28); never on the projector
        # before the instructor picks them.
        return fragments.presenter_html(room, ["answers"])
    else:
        return ""
    return fragments.render_parts(fragments.PRESENTER, [part], ctx)


def run_changed(*, room) -> None:
    shared = room.shared_run
    if shared is not None and shared.observed is not None:
        parts = ["outcome"]
    else:
        parts = ["run"]
    # Each seat's own guess and result follow: the shared rendering has no seat to show.
    personal = []
    if shared is not None and shared.fired_at is not None:
        personal = ["prediction", "outcome"] if parts == ["outcome"] else ["prediction"]
    board = parts == ["outcome"] and room.leaderboard
    send(
        room,
        participant=fragments.participant_html(room, parts) + _board(room, board),
        presenter=fragments.presenter_html(room, parts) + _board(room, board),
        screen=screens.screen_html(room, parts),
        run_id=shared.run_id if shared is not None else "",
        personal=personal,
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

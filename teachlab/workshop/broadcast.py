"""Send the room's screens their new HTML through the channel layer, after the commit.

A message carries one rendering per role: every participant gets `participant`, every
presenter gets `presenter`; either may be empty. The per-process hub fans it out.
"""

from __future__ import annotations

import time

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from teachlab.workshop import fragments, predictions, votes


def room_group(room_id: int) -> str:
    return f"workshop.room.{room_id}"


def send(room, *, participant: str = "", presenter: str = "", **extra) -> None:
    message = {
        "type": "room.push",
        "participant": participant,
        "presenter": presenter,
        "at": time.time(),
        **extra,
    }
    group = room_group(room.pk)

    def push() -> None:
        layer = get_channel_layer()
        if layer is not None:
            async_to_sync(layer.group_send)(group, message)

    transaction.on_commit(push)


def stage_changed(*, room) -> None:
    send(
        room,
        participant=fragments.participant_html(room, ["stage", "banner"]),
        presenter=fragments.presenter_html(room, ["stage", "claims"]),
    )


def claim_changed(*, room) -> None:
    send(
        room,
        participant=fragments.participant_html(room, ["claim"]),
        presenter=fragments.presenter_html(room, ["claim"]),
    )


# The three below fire once per vote, guess or join, so they render from a small context.
def answered_changed(*, room, claim_round) -> None:
    ctx = {"room": room, "claim_round": claim_round, "tally": votes.tally(claim_round)}
    send(room, presenter=fragments.render_parts(fragments.PRESENTER, ["answered"], ctx))


def presenter_seats_changed(*, room) -> None:
    send(room, presenter=fragments.render_parts(fragments.PRESENTER, ["seats"], {"room": room}))


def spread_changed(*, room, shared_run) -> None:
    ctx = {"room": room, "shared": shared_run, "spread": predictions.spread(shared_run)}
    send(room, presenter=fragments.render_parts(fragments.PRESENTER, ["spread"], ctx))


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
        run_id=shared.run_id if shared is not None else "",
    )


def room_closed(*, room) -> None:
    send(
        room,
        participant=fragments.participant_html(room, ["ended"]),
        presenter=fragments.presenter_html(room, ["ended"]),
        close=True,
    )

"""What a room socket is sent, drawn in the database thread from the same partials as the
pages: the whole state when it opens (or reconnects), the ended page of a closed room, and a
participant's own confirmation of a typed answer."""

from __future__ import annotations

from teachlab.workshop import fragments, rounds, screens
from teachlab.workshop.models import Room, Seat

SCREEN_PARTS = ["stage", "claim", "answers", "run", "presence", "joinstate", "joined"]


def participant_state_html(seat_id: int) -> str:
    seat = Seat.objects.select_related("room").get(pk=seat_id)
    return fragments.participant_html(
        seat.room, ["stage", "banner", "claim", "run", "error"], seat=seat, live=True
    ) + fragments.scores_html(seat.room, ["leaderboard"], seat=seat)


def participant_ended_html(room_id: int) -> str:
    return fragments.participant_html(Room.objects.get(pk=room_id), ["ended"])


def presenter_state_html(room_id: int) -> str:
    room = Room.objects.get(pk=room_id)
    return (
        fragments.presenter_html(
            room, ["stage", "claims", "claim", "seats", "run", "error"], live=True
        )
        + fragments.scores_html(room, ["leaderboard"])
        + fragments.moderation_html(room, ["status"])
    )


def presenter_ended_html(room_id: int) -> str:
    return fragments.presenter_html(Room.objects.get(pk=room_id), ["ended"])


def screen_state_html(room_id: int) -> str:
    return screens.screen_html(Room.objects.get(pk=room_id), SCREEN_PARTS, live=True)


def screen_ended_html(room_id: int) -> str:
    return screens.screen_html(Room.objects.get(pk=room_id), ["ended"])


def answer_html(*, seat: Seat, fields: dict) -> str:
    """Store a participant's typed answer; their own copy of it, confirmed."""
    answer = rounds.answer_submit(seat=seat, round_id=fields["round"], text=fields["text"])
    ctx = {"my_answer": answer, "answers_open": True}
    return fragments.render_parts(fragments.PARTICIPANT, ["myanswer", "error"], ctx)

"""The room as a deck (issue 28), over the real ASGI stack: one path for a presenter action
whether it comes as a console button (HTTP) or a socket frame; the projector told the moment
(blank, leaderboard, podium); the console's per-person marks and the answers arriving live."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import reverse

from teachlab.workshop import planrun, plans, rooms, rounds, roundstate, votes
from teachlab.workshop.models import Room
from tests.workshop.conftest import (
    asynctest,
    join_socket,
    presenter_socket,
    receive_until,
    send,
)

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async


def _post(user, room: Room, name: str, **data) -> str:
    client = Client()
    client.force_login(user)
    url = reverse(f"workshop:{name}", args=[room.code])
    return client.post(url, data, HTTP_HX_REQUEST="true").content.decode()


@asynctest
async def test_blank_and_the_leaderboard_take_one_path_from_a_button_or_a_socket_frame(
    room, instructor
):
    projector = await presenter_socket(room, instructor, view="screen")
    console = await presenter_socket(room, instructor)

    await db(_post)(instructor, room, "blank", state="on")  # the B key presses this button
    assert 'data-moment="blank"' in await receive_until(projector, 'id="ws-moment"')
    await send(console, action="blank", state="off")  # the same action as a socket frame
    assert 'data-moment="lobby"' in await receive_until(projector, 'data-moment="lobby"')
    assert not (await db(Room.objects.get)(pk=room.pk)).blanked

    await send(console, action="leaderboard", state="on")  # L
    frame = await receive_until(projector, 'id="ws-board"')
    assert 'data-kind="leaderboard"' in frame and "Leaderboard" in frame
    await send(console, action="blank", state="maybe")
    assert "Blank the projector “on” or “off”." in await receive_until(
        console, "Blank the projector “on”"
    )
    body = await db(_post)(instructor, room, "blank", state="maybe")
    assert "Blank the projector “on” or “off”." in body
    await projector.disconnect()
    await console.disconnect()


@asynctest
async def test_a_timer_over_the_socket_is_the_consoles_t_key(room, instructor, question):
    await db(rooms.room_drive)(room=room, question_slug=question.slug, tier="prompt")
    await db(votes.claim_open)(room=room, claim_key=question.claims[0].key)
    console = await presenter_socket(room, instructor)
    await send(console, action="timer", seconds="30")
    assert "Votes close in" in await receive_until(console, 'id="ws-claimtimer"')
    await console.disconnect()


@asynctest
async def test_the_console_marks_who_answered_and_shows_typed_answers_as_they_arrive(
    room, instructor, question
):
    await db(rooms.room_drive)(room=room, question_slug=question.slug, tier="prompt")
    ana = await db(rooms.seat_join)(room=room, nickname="Ana")
    await db(rooms.seat_join)(room=room, nickname="Bo")
    await db(rounds.answer_round_open)(room=room, seconds=None)
    phone = await join_socket(ana)
    console = await presenter_socket(room, instructor)
    ar = (await db(Room.objects.select_related("answer_round").get)(pk=room.pk)).answer_round

    await send(phone, action="answer", round=str(ar.pk), text="Make it idempotent", aid="a1")
    frames = ""
    while "Make it idempotent" not in frames or "1 of 2 answered" not in frames:
        frames += await console.receive_from(timeout=5)
    assert 'class="answer-list live-answers"' in frames  # before the round ends
    assert f'person here answered" data-seat="{ana.pk}"' in frames
    await phone.disconnect()
    await console.disconnect()


def test_the_moment_is_the_newest_thing_shown_then_blank_leaderboard_and_podium_win(
    room, question, instructor
):
    assert roundstate.moment(room) == "lobby"
    rooms.room_drive(room=room, question_slug=question.slug, tier="basics")
    assert roundstate.moment(room) == "tier"
    votes.claim_open(room=room, claim_key=question.claims[0].key)
    room.refresh_from_db()
    assert roundstate.moment(room) == "claim"
    rooms.room_drive(room=room, question_slug=question.slug, tier="solid")
    room.refresh_from_db()
    assert roundstate.moment(room) == "tier"  # the claim is over: phones and projector drop it
    rooms.room_leaderboard(room=room, shown=True)
    assert roundstate.moment(room) == "leaderboard"
    rooms.room_blank(room=room, blanked=True)
    assert roundstate.moment(room) == "blank"

    plan = plans.plan_create(
        owner=instructor,
        title="One",
        steps=[{"kind": "tier", "question": question.slug, "tier": "prompt"}],
    )
    planned = planrun.room_from_plan(instructor=instructor, plan=plan)
    planned = planrun.plan_next(room=planned)
    assert roundstate.moment(planned) == "tier"
    planned = planrun.plan_next(room=planned)
    assert roundstate.moment(planned) == "podium"
    rooms.room_close(room=planned)
    assert roundstate.moment(planned) == "ended"

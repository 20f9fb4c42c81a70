"""Next on a planned room reaches the screens over the real ASGI stack and channel layer."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import reverse

from teachlab.workshop import planrun, plans, rooms
from teachlab.workshop.models import Room
from tests.workshop.conftest import asynctest, join_socket, presenter_socket, receive_until, send

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async


def _press_next(room: Room, user) -> int:
    """The console's Next button, over HTTP as the page sends it."""
    client = Client()
    client.force_login(user)
    return client.post(reverse("workshop:plan_next", args=[room.code])).status_code


@asynctest
async def test_next_on_a_claim_step_opens_that_claim_for_votes_on_every_phone(instructor, question):
    claim = question.claims[0]
    plan = await db(plans.plan_create)(
        owner=instructor, title="Claims first", steps=[{"kind": "claim", "claim": claim.key}]
    )
    room = await db(planrun.room_from_plan)(instructor=instructor, plan=plan)
    seat = await db(rooms.seat_join)(room=room, nickname="ana")
    phone = await join_socket(seat)
    console = await presenter_socket(room, instructor)

    assert await db(_press_next)(room, instructor) == 302

    cr = (await db(Room.objects.select_related("claim_round").get)(pk=room.pk)).claim_round
    assert cr.claim_key == claim.key
    frame = await receive_until(phone, f'data-round="{cr.pk}"')
    assert 'data-state="open"' in frame
    assert f'name="round" value="{cr.pk}"' in frame  # the vote buttons for this claim
    panel = await receive_until(console, 'id="ws-plan"')
    assert "Now, step 1 of 1" in panel
    await phone.disconnect()
    await console.disconnect()


@asynctest
async def test_the_presenter_socket_steps_a_plan_and_a_participant_socket_may_not(
    instructor, question
):
    steps = [
        {"kind": "tier", "question": question.slug, "tier": "prompt"},
        {"kind": "tier", "question": question.slug, "tier": "solid"},
    ]
    plan = await db(plans.plan_create)(owner=instructor, title="Tiers", steps=steps)
    room = await db(planrun.room_from_plan)(instructor=instructor, plan=plan)
    seat = await db(rooms.seat_join)(room=room, nickname="ana")
    phone = await join_socket(seat)
    console = await presenter_socket(room, instructor)

    await send(phone, action="plan_next")
    assert "Only the instructor can do that." in await receive_until(phone, "ws-error")
    await send(console, action="plan_next")
    await receive_until(console, "Now, step 1 of 2")
    await send(console, action="plan_next")
    await receive_until(phone, 'data-tier="solid"')
    await send(console, action="plan_previous")
    await receive_until(console, "Now, step 1 of 2")
    room = await db(Room.objects.get)(pk=room.pk)
    assert (room.plan_at, room.tier) == (0, "prompt")
    await phone.disconnect()
    await console.disconnect()

"""A participant's action sent twice (the page's resend after a reconnect, and the original
held up in a cut connection) is acted on once and acknowledged both times (actionids.py),
through the whole ASGI stack, the channel layer and Redis."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async

from teachlab.workshop import rooms, votes
from teachlab.workshop.models import Vote
from tests.workshop.conftest import asynctest, join_socket, receive_until, send

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async


async def _ack(comm, aid: str) -> dict:
    frame = await receive_until(comm, f'{{"ack": "{aid}"', timeout=10)
    return json.loads(frame)


@asynctest
async def test_a_resent_vote_is_acknowledged_again_and_does_not_undo_a_later_one(room, question):
    await db(rooms.room_drive)(room=room, question_slug=question.slug, tier="prompt")
    cr = await db(votes.claim_open)(room=room, claim_key=question.claims[0].key)
    seat = await db(rooms.seat_join)(room=room, nickname="ana")
    first, other = await join_socket(seat), await join_socket(seat)  # the cut socket, the new
    holds = {"action": "vote", "round": str(cr.pk), "choice": "holds", "aid": "a1"}

    await send(first, **holds)
    assert (await _ack(first, "a1"))["ok"] is True
    await send(other, action="vote", round=str(cr.pk), choice="costs", aid="b2")
    assert (await _ack(other, "b2"))["ok"] is True
    # The first vote arrives again (late, on the other socket): acknowledged, nothing changed.
    await send(other, **holds)
    frame = await receive_until(other, "ws-myvote", timeout=10)
    assert "Costs you the question" in frame  # the page is told what is really recorded
    assert (await _ack(other, "a1"))["ok"] is True
    choices = await db(
        lambda: list(Vote.objects.filter(round=cr).values_list("choice", flat=True))
    )()
    assert choices == ["costs"]
    for comm in (first, other):
        await comm.disconnect()


@asynctest
async def test_a_refused_action_is_acknowledged_as_refused_each_time_it_arrives(room, question):
    seat = await db(rooms.seat_join)(room=room, nickname="ana")
    ana = await join_socket(seat)
    for _ in range(2):
        await send(ana, action="vote", round="999999", choice="holds", aid="c3")
        ack = await _ack(ana, "c3")
        assert ack["ok"] is False
        assert "no longer open" in ack["message"]
    assert not await db(Vote.objects.exists)()
    await ana.disconnect()


@asynctest
async def test_a_malformed_action_id_is_refused(room):
    ana = await join_socket(await db(rooms.seat_join)(room=room, nickname="ana"))
    await send(ana, action="vote", round="1", choice="holds", aid="<script>")
    await receive_until(ana, "Malformed action id.", timeout=10)
    await ana.disconnect()


@asynctest
async def test_a_vote_delivered_after_the_vote_that_replaced_it_does_not_undo_it(room, question):
    await db(rooms.room_drive)(room=room, question_slug=question.slug, tier="prompt")
    cr = await db(votes.claim_open)(room=room, claim_key=question.claims[0].key)
    seat = await db(rooms.seat_join)(room=room, nickname="ana")
    ana = await join_socket(seat)
    # Tapped "holds" then "costs"; "holds" was held up in a cut connection and comes last.
    await send(ana, action="vote", round=str(cr.pk), choice="costs", aid="d2", at="2000")
    assert (await _ack(ana, "d2"))["ok"] is True
    await send(ana, action="vote", round=str(cr.pk), choice="holds", aid="d1", at="1000")
    frame = await receive_until(ana, "ws-myvote", timeout=10)
    assert "Costs you the question" in frame
    assert (await _ack(ana, "d1"))["ok"] is True
    choices = await db(
        lambda: list(Vote.objects.filter(round=cr).values_list("choice", flat=True))
    )()
    assert choices == ["costs"]
    await ana.disconnect()

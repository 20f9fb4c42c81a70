"""Votes stored in batches (votes.votes_cast, batching.RoomBatcher): a room voting at once gets
every voter's own answer, each refusal as it would be alone, and one row per seat."""

from __future__ import annotations

import asyncio
import re

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from teachlab.workshop import castbatches, predictions, rooms, votes
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import ClaimRound, Prediction, SharedRun, Vote
from tests.workshop.conftest import asynctest, join_socket, receive_until, send

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async


def _open_claim(room, question) -> ClaimRound:
    rooms.room_drive(room=room, question_slug=question.slug, tier="prompt")
    return votes.claim_open(room=room, claim_key=question.claims[0].key)


def test_a_batch_stores_one_vote_per_seat_and_refuses_each_bad_ballot_on_its_own(room, question):
    cr = _open_claim(room, question)
    ana, bo, cy = (rooms.seat_join(room=room, nickname=n) for n in ("ana", "bo", "cy"))
    rooms.seat_kick(room=room, seat_id=cy.pk)
    results = votes.votes_cast(
        room_id=room.pk,
        ballots=[
            (ana.pk, cr.pk, Vote.HOLDS),
            (bo.pk, cr.pk, "maybe"),
            (cy.pk, cr.pk, Vote.COSTS),
            (bo.pk, cr.pk + 1000, Vote.COSTS),
            (ana.pk, cr.pk, Vote.COSTS),  # ana changes her mind within the batch: this wins
        ],
    )
    assert [type(r).__name__ for r in results] == [
        "Vote",
        "WorkshopError",
        "WorkshopError",
        "WorkshopError",
        "Vote",
    ]
    assert "holds up" in results[1].message
    assert results[2].message == "The instructor removed you from this room."
    assert results[3].message == "That claim is no longer open for votes."
    assert list(Vote.objects.values_list("seat_id", "choice")) == [(ana.pk, Vote.COSTS)]


def test_a_batch_after_the_timer_or_the_reveal_stores_nothing(room, question):
    cr = _open_claim(room, question)
    ana = rooms.seat_join(room=room, nickname="ana")
    ClaimRound.objects.filter(pk=cr.pk).update(closes_at=timezone.now())
    (late,) = votes.votes_cast(room_id=room.pk, ballots=[(ana.pk, cr.pk, Vote.HOLDS)])
    assert late.message == "Time is up: votes on this claim are closed."
    ClaimRound.objects.filter(pk=cr.pk).update(closes_at=None, revealed_at=timezone.now())
    with pytest.raises(WorkshopError, match="revealed"):
        votes.vote_cast(seat=ana, round_id=cr.pk, choice=Vote.HOLDS)
    assert not Vote.objects.exists()


def test_a_batch_of_guesses_stores_one_per_seat_and_refuses_each_bad_one_on_its_own(room):
    shared = predictions.shared_run_open(room=room, lane="redis-short", params={"count": 1})
    ana, bo, cy = (rooms.seat_join(room=room, nickname=n) for n in ("ana", "bo", "cy"))
    rooms.seat_kick(room=room, seat_id=cy.pk)
    results = predictions.predictions_make(
        room_id=room.pk,
        guesses=[
            (ana.pk, shared.pk, "3"),
            (bo.pk, shared.pk, "many"),
            (cy.pk, shared.pk, "2"),
            (bo.pk, shared.pk + 1000, "2"),
            (ana.pk, shared.pk, " 5 "),  # ana's second guess in the batch wins
        ],
    )
    errors = [r.message if isinstance(r, WorkshopError) else None for r in results]
    assert errors == [
        None,
        "Your prediction must be a whole number.",
        "The instructor removed you from this room.",
        "That run is no longer open for predictions.",
        None,
    ]
    assert list(Prediction.objects.values_list("seat_id", "value")) == [(ana.pk, 5)]
    SharedRun.objects.filter(pk=shared.pk).update(fired_at=timezone.now())
    with pytest.raises(WorkshopError, match="fired"):
        predictions.prediction_make(seat=bo, shared_run_id=shared.pk, value="4")


@asynctest
async def test_thirty_sockets_voting_at_once_each_get_their_own_answer(room, question, monkeypatch):
    batches: list[int] = []
    handle = castbatches.VOTES.handle

    def counted(room_id, ballots):
        batches.append(len(ballots))
        return handle(room_id, ballots)

    monkeypatch.setattr(castbatches.VOTES, "handle", counted)
    cr = await db(_open_claim)(room, question)
    seats = [await db(rooms.seat_join)(room=room, nickname=f"p{i:02d}") for i in range(30)]
    await db(rooms.seat_kick)(room=room, seat_id=seats[-1].pk)
    comms = [await join_socket(seat) for seat in seats[:-1]]
    choices = [Vote.HOLDS if i % 3 else Vote.COSTS for i in range(len(comms))]
    await asyncio.gather(
        *(
            send(comm, action="vote", round=cr.pk, choice=choice)
            for comm, choice in zip(comms, choices, strict=True)
        )
    )
    for comm, choice in zip(comms, choices, strict=True):
        frame = await receive_until(comm, 'id="ws-myvote"', timeout=10)
        shown = re.search(r"Your vote: <strong>([^<]+)</strong>", frame).group(1)
        assert shown == dict(Vote.CHOICES)[choice]
    assert sum(batches) == len(comms) and len(batches) < len(comms) // 2, batches
    stored = await db(lambda: dict(Vote.objects.values_list("seat_id", "choice")))()
    assert stored == {seat.pk: c for seat, c in zip(seats, choices, strict=False)}
    for comm in comms:
        await comm.disconnect()

"""A vote or a guess racing the presenter's reveal or close waits for it, then is refused.

On PostgreSQL two transactions really interleave: without the room's row lock
(selectors.room_locked) a vote reads the claim as open while the reveal is still uncommitted, and
is stored after the reveal. The presenter's action runs in a thread of its own (its own
connection) and holds its transaction open for a moment; the participant's call must wait
and then see it. SQLite's test database is a shared in-memory one that refuses rather than
waits, and a SQLite file serialises writers with its IMMEDIATE transactions anyway.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from teachlab.workshop import predictions, rooms, votes
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import Prediction, Room, Vote

pytestmark = pytest.mark.django_db(transaction=True)

HOLD = 1.0  # seconds the presenter's transaction stays open after its change


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("row locks matter on PostgreSQL; run with DATABASE_URL (scripts/test does)")


def presenter_acts_in_another_transaction(action) -> threading.Thread:
    """Run `action` in its own transaction on another connection, commit HOLD s later."""
    acted = threading.Event()
    failures: list[BaseException] = []

    def body() -> None:
        try:
            with transaction.atomic():
                action()
                acted.set()
                time.sleep(HOLD)
        except BaseException as exc:  # noqa: BLE001 - surfaced by the test
            failures.append(exc)
            acted.set()
        finally:
            connection.close()

    thread = threading.Thread(target=body)
    thread.failures = failures  # type: ignore[attr-defined]
    thread.start()
    assert acted.wait(10)
    assert not failures, failures
    return thread


def test_a_vote_cast_while_the_reveal_commits_waits_and_is_refused(room, question):
    claim = question.claims[0]
    cr = votes.claim_open(room=room, claim_key=claim.key)
    seat = rooms.seat_join(room=room, nickname="Ana")

    reveal = presenter_acts_in_another_transaction(
        lambda: votes.claim_reveal(room=Room.objects.get(pk=room.pk))
    )
    started = time.monotonic()
    with pytest.raises(WorkshopError, match="revealed"):
        votes.vote_cast(seat=seat, round_id=cr.pk, choice=Vote.HOLDS)
    waited = time.monotonic() - started
    reveal.join(10)

    assert waited >= HOLD * 0.8, "the vote did not wait for the reveal's transaction"
    assert not Vote.objects.filter(round=cr).exists()


def test_a_guess_made_while_the_room_closes_waits_and_is_refused(room):
    shared = predictions.shared_run_open(
        room=room, lane="redis-short", params={"count": 1}, metric="receipts"
    )
    seat = rooms.seat_join(room=room, nickname="Bo")

    close = presenter_acts_in_another_transaction(
        lambda: rooms.room_close(room=Room.objects.get(pk=room.pk))
    )
    with pytest.raises(WorkshopError, match="ended"):
        predictions.prediction_make(seat=seat, shared_run_id=shared.pk, value=3)
    close.join(10)

    assert not Prediction.objects.filter(shared_run=shared).exists()


def test_votes_from_many_seats_at_once_are_all_counted(room, question):
    """The lock serialises a room's votes; it must not lose or refuse any of them."""
    claim = question.claims[0]
    cr = votes.claim_open(room=room, claim_key=claim.key)
    seats = [rooms.seat_join(room=room, nickname=f"p{i}") for i in range(12)]
    errors: list[BaseException] = []

    def vote(seat) -> None:
        try:
            votes.vote_cast(seat=seat, round_id=cr.pk, choice=Vote.COSTS)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=vote, args=(s,)) for s in seats]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert not errors
    assert Vote.objects.filter(round=cr).count() == len(seats)

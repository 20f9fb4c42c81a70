"""Scores and feedback: each participant's own vote, guess and place, the ranking of a run
(every participant, paged, "your place"), and the leaderboard scored on accuracy."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from teachlab.workshop import broadcast, names, predictions, results, rooms, scores, votes
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import ClaimRound, Prediction, Room, Seat, SharedRun, Vote
from tests.workshop.conftest import (
    asynctest,
    join_socket,
    presenter_socket,
    receive_until,
    send,
    session_cookie,
    socket,
)

# Sockets need committed rows (the consumer reads them in another thread); plain HTTP and
# service tests roll back instead, which is much quicker.
sockets = pytest.mark.django_db(transaction=True)
db = database_sync_to_async
OWN_RESULT = 'id="ws-myresult" hx-swap-oob="true" class="myresult mine"'  # not the placeholder


@pytest.fixture
def instructor(db):
    """Staff without a password: nothing to hash (PBKDF2 costs a second a user here)."""
    return get_user_model().objects.create_user("instructor", is_staff=True)


def _seats(room: Room, count: int) -> list[Seat]:
    """`count` seats named P001.. (made in one statement: joining 100 one by one is slow)."""
    made = []
    for n in range(1, count + 1):
        nickname = f"P{n:03d}"
        typed, folded = names.skeletons(nickname)
        made.append(
            Seat(room=room, nickname=nickname, nickname_key=names.nickname_key(nickname),
                 skeleton=typed, skeleton_folded=folded)
        )  # fmt: skip
    Seat.objects.bulk_create(made)
    return list(Seat.objects.filter(room=room).select_related("room").order_by("nickname"))


def _fired_run(room: Room, guesses: dict[int, int]) -> SharedRun:
    """A shared run the room predicted (seat id → value), fired, not yet settled."""
    shared = predictions.shared_run_open(room=room, lane="redis-short", params={"count": 1})
    Prediction.objects.bulk_create(
        [Prediction(shared_run=shared, seat_id=s, value=v) for s, v in guesses.items()]
    )
    SharedRun.objects.filter(pk=shared.pk).update(run_id="no-such-run", fired_at=timezone.now())
    return SharedRun.objects.get(pk=shared.pk)


def _client_of(seat: Seat) -> Client:
    client = Client()
    client.cookies[rooms.seat_cookie_name(seat.room.code)] = seat.token
    return client


@sockets
@asynctest
async def test_participant_70_of_100_sees_their_place_and_their_row(room):
    seats = await db(_seats)(room, 100)
    # P001 guessed 1, …, P100 guessed 100; the run shows 0, so P070 is 70th of 100.
    shared = await db(_fired_run)(room, {s.pk: n for n, s in enumerate(seats, start=1)})
    p070, p001 = seats[69], seats[0]
    sockets = {seat.pk: await join_socket(seat) for seat in (p070, p001)}

    await db(predictions.shared_run_finish)(shared=shared, summary={"receipts": 0})
    # The shared outcome (page 1, nobody marked), then each seat's own result.
    outcome = await receive_until(sockets[p070.pk], 'id="ws-ranking"')
    assert "page 1 of 5" in outcome and 'class="mine"' not in outcome
    mine = await receive_until(sockets[p070.pk], OWN_RESULT)
    assert re.search(r"Your place: <strong>70th</strong> of 100", mine)
    assert "off by <strong>70</strong>" in mine
    assert "page=4" in mine  # "show my row" fetches the page that holds it
    first = await receive_until(sockets[p001.pk], OWN_RESULT)
    assert "1st</strong> of 100, the closest" in first
    for comm in sockets.values():
        await comm.disconnect()

    # Reloading the page (or "show my row") gives the page holding the seat's row, marked.
    client = await db(_client_of)(p070)
    page = (await db(client.get)(reverse("workshop:room", args=[room.code]))).content.decode()
    assert "page 4 of 5" in page
    row = re.search(r'<tr class="mine" aria-current="true" data-seat="(\d+)">(.*?)</tr>', page)
    assert (
        row and int(row.group(1)) == p070.pk and "P070" in row.group(2) and "(you)" in row.group(2)
    )
    assert "70th</strong> of 100" in page
    # Everyone is ranked: the last page holds the 100th, beyond the old 30-row cut.
    url = reverse("workshop:ranking", args=[room.code])
    last = await db(client.get)(url, {"run": shared.pk, "page": 5})
    assert "P100" in last.content.decode() and "page 5 of 5" in last.content.decode()
    assert 'class="mine"' not in last.content.decode()


@pytest.mark.django_db
def test_the_ranking_shares_places_between_equal_distances(room):
    seats = _seats(room, 4)
    shared = _fired_run(room, {seats[0].pk: 10, seats[1].pk: 8, seats[2].pk: 12, seats[3].pk: 20})
    predictions.shared_run_finish(shared=shared, summary={"receipts": 10})
    rows = scores.run_ranking(SharedRun.objects.get(pk=shared.pk))
    assert [(r.nickname, r.place, r.off) for r in rows] == [
        ("P001", 1, 0), ("P002", 2, 2), ("P003", 2, 2), ("P004", 4, 10),
    ]  # fmt: skip
    stranger = Client().get(reverse("workshop:ranking", args=[room.code]), {"run": shared.pk})
    assert stranger.status_code == 403


@sockets
@asynctest
async def test_each_participant_sees_their_own_vote_judged_after_the_reveal(
    room, instructor, question
):
    claim = question.claims[0]
    right, wrong = (Vote.HOLDS, Vote.COSTS) if claim.holds else (Vote.COSTS, Vote.HOLDS)
    await db(votes.claim_open)(room=room, claim_key=claim.key)
    round_id = (await db(ClaimRound.objects.get)(room=room)).pk
    ana, bo, cy = [await db(rooms.seat_join)(room=room, nickname=n) for n in ("Ana", "Bo", "Cy")]
    comms = [await join_socket(s) for s in (ana, bo, cy)]
    await db(votes.vote_cast)(seat=ana, round_id=round_id, choice=right)
    await db(votes.vote_cast)(seat=bo, round_id=round_id, choice=wrong)
    presenter = await presenter_socket(room, instructor)
    await send(presenter, action="reveal")
    said = [
        await receive_until(c, 'id="ws-myclaim" hx-swap-oob="true" class="myresult mine"')
        for c in comms
    ]
    assert '<strong class="right">right</strong>' in said[0]
    assert '<strong class="wrong">not this time</strong>' in said[1]
    assert "You did not vote on this claim" in said[2]
    for comm in [*comms, presenter]:
        await comm.disconnect()


@sockets
@asynctest
async def test_a_participant_keeps_sight_of_their_own_prediction_after_the_fire(room):
    ana, bo = [await db(rooms.seat_join)(room=room, nickname=n) for n in ("Ana", "Bo")]
    shared = await db(predictions.shared_run_open)(
        room=room, lane="redis-short", params={"count": 1}
    )
    await db(predictions.prediction_make)(seat=ana, shared_run_id=shared.pk, value=12)
    comms = [await join_socket(s) for s in (ana, bo)]

    def fired() -> None:
        SharedRun.objects.filter(pk=shared.pk).update(fired_at=timezone.now(), run_id="x")
        room.refresh_from_db()
        broadcast.run_changed(room=room)  # what shared_run_fire sends every screen

    await db(fired)()
    # The fire's shared rendering has no seat; each seat's own guess follows it.
    assert "(you can change it" not in await receive_until(
        comms[0], "Your prediction: <strong>12</strong>"
    )
    frames = await _drain(comms[1])
    assert any('id="ws-live"' in f for f in frames)  # it did get the fire
    assert not any("Your prediction" in f for f in frames)
    for comm in comms:
        await comm.disconnect()


async def _drain(comm, quiet: float = 1.0) -> list[str]:
    """Every frame until the socket has been quiet for `quiet` seconds."""
    frames = []
    while not await comm.receive_nothing(timeout=quiet):
        frames.append(await comm.receive_from(timeout=5))
    return frames


@pytest.mark.django_db
def test_the_leaderboard_scores_accuracy_and_never_speed(room, instructor, question):
    claim = question.claims[0]
    right, wrong = (Vote.HOLDS, Vote.COSTS) if claim.holds else (Vote.COSTS, Vote.HOLDS)
    votes.claim_open(room=room, claim_key=claim.key)
    cr = ClaimRound.objects.get()
    fast, slow, off, silent = (
        rooms.seat_join(room=room, nickname=n) for n in ("Fast", "Slow", "Off", "Silent")
    )
    votes.vote_cast(seat=fast, round_id=cr.pk, choice=right)
    votes.vote_cast(seat=off, round_id=cr.pk, choice=wrong)
    votes.vote_cast(seat=slow, round_id=cr.pk, choice=right)  # later, and just as right
    room.refresh_from_db()
    votes.claim_reveal(room=room)
    shared = _fired_run(room, {fast.pk: 10, slow.pk: 10, off.pk: 15})
    predictions.shared_run_finish(shared=shared, summary={"receipts": 10})
    board = {r.nickname: (r.place, r.score, r.answered) for r in scores.leaderboard(room)}
    # Silent joined and did nothing: no place on the leaderboard (issue 28, item 6).
    assert board == {"Fast": (1, 2.0, 2), "Slow": (1, 2.0, 2), "Off": (3, 0.5, 2)}

    driver = Client()
    driver.force_login(instructor)
    hidden = _client_of(fast).get(reverse("workshop:room", args=[room.code])).content.decode()
    assert 'data-shown="no"' in hidden
    driver.post(reverse("workshop:leaderboard", args=[room.code]), {"state": "on"})
    shown = _client_of(fast).get(reverse("workshop:room", args=[room.code])).content.decode()
    assert 'data-shown="yes"' in shown
    assert "Your score: <strong>2.0</strong> from 2 answers; <strong>1st</strong> of 3" in shown


@pytest.mark.django_db
def test_a_claim_replaced_before_its_reveal_is_closed_and_scores_nobody(room, question):
    first, second = question.claims[0], question.claims[1]
    right = Vote.HOLDS if first.holds else Vote.COSTS
    votes.claim_open(room=room, claim_key=first.key)
    unseen = ClaimRound.objects.get()
    ana = rooms.seat_join(room=room, nickname="Ana")
    votes.vote_cast(seat=ana, round_id=unseen.pk, choice=right)
    room.refresh_from_db()
    votes.claim_open(room=room, claim_key=second.key)

    unseen.refresh_from_db()
    assert unseen.revealed_at is None and unseen.closed_at is not None
    with pytest.raises(WorkshopError, match="no longer open"):
        votes.vote_cast(seat=ana, round_id=unseen.pk, choice=right)
    # Nobody saw its answer: no point for the right vote, and no "right" in the exports.
    assert [(r.nickname, r.score, r.answered) for r in scores.leaderboard(room)] == [
        ("Ana", 0.0, 0)
    ]
    assert results.participant_rows(room)[0]["right"] == 0
    claim_row = next(r for r in results.answer_rows(room) if r["question"] == unseen.text)
    assert claim_row["correct"] == "" and claim_row["score"] == ""
    assert results.claim_rows(room)[0]["closed_at"] == unseen.closed_at


@pytest.mark.django_db
def test_the_leaderboard_lists_only_seats_that_took_part(room, question):
    votes.claim_open(room=room, claim_key=question.claims[0].key)
    cr = ClaimRound.objects.get()
    voter, _idle, gone = (rooms.seat_join(room=room, nickname=n) for n in ("Voter", "Idle", "Gone"))
    votes.vote_cast(seat=voter, round_id=cr.pk, choice=Vote.HOLDS)
    votes.vote_cast(seat=gone, round_id=cr.pk, choice=Vote.HOLDS)
    rooms.seat_kick(room=room, seat_id=gone.pk)
    assert [r.nickname for r in scores.leaderboard(room)] == ["Voter"]


@sockets
@asynctest
async def test_a_rename_redraws_the_name_on_every_screen_that_shows_it(room, instructor):
    butt, bo = [await db(rooms.seat_join)(room=room, nickname=n) for n in ("Troll", "Bo")]
    shared = await db(_fired_run)(room, {butt.pk: 10, bo.pk: 12})
    await db(predictions.shared_run_finish)(shared=shared, summary={"receipts": 10})
    await db(rooms.room_leaderboard)(room=room, shown=True)
    other = await join_socket(bo)
    presenter = await presenter_socket(room, instructor)
    screen = socket(f"/ws/workshop/{room.code}/screen/", await db(session_cookie)(instructor))
    assert (await screen.connect())[0]
    await screen.receive_from(timeout=5)

    await db(rooms.seat_rename)(room=room, seat_id=butt.pk, nickname="Carol")
    seen = {
        "participant": await receive_until(other, "Closest: <strong>Carol</strong>"),
        "presenter": await receive_until(presenter, "Closest: <strong>Carol</strong>"),
        "projector": await receive_until(screen, "Closest: <strong>Carol</strong>"),
    }
    assert all("Troll" not in frame for frame in seen.values())
    assert re.search(r'class="c-name">Carol<', seen["participant"])  # leaderboard and ranking

    await db(rooms.seat_kick)(room=room, seat_id=bo.pk)
    gone = await receive_until(presenter, "Closest: <strong>Carol</strong>")
    assert ">Bo<" not in gone and "Bo</strong>" not in gone
    for comm in (presenter, screen):
        await comm.disconnect()

"""Each permission rule of a workshop socket, through the whole ASGI stack (origin check,
sessions, routing) and the real channel layer on the tests' private Redis."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async

from teachlab.workshop import rooms, votes
from teachlab.workshop.consumers import ParticipantSocket
from teachlab.workshop.models import ClaimRound, Room, Vote
from tests.workshop.conftest import (
    asynctest,
    join_socket,
    make_user,
    presenter_socket,
    receive_until,
    send,
    session_cookie,
    socket,
)

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async


@asynctest
async def test_a_socket_without_a_seat_is_refused(room):
    comm = socket(f"/ws/workshop/{room.code}/")
    connected, _ = await comm.connect()
    assert not connected


@asynctest
async def test_a_seat_cookie_of_another_room_is_refused(instructor):
    room_a = await db(rooms.room_create)(instructor=instructor, title="A")
    room_b = await db(rooms.room_create)(instructor=instructor, title="B")
    seat_b = await db(rooms.seat_join)(room=room_b, nickname="bea")
    comm = socket(
        f"/ws/workshop/{room_a.code}/",
        f"{rooms.seat_cookie_name(room_a.code)}={seat_b.token}",
    )
    connected, _ = await comm.connect()
    assert not connected


@asynctest
async def test_only_the_instructor_or_staff_opens_the_presenter_socket(room):
    seat = await db(rooms.seat_join)(room=room, nickname="ana")
    learner = await db(make_user)("learner", staff=False)
    other_staff = await db(make_user)("colleague", staff=True)
    for cookie in [
        "",
        await db(session_cookie)(learner),
        f"{rooms.seat_cookie_name(room.code)}={seat.token}",
    ]:
        comm = socket(f"/ws/workshop/{room.code}/present/", cookie)
        connected, _ = await comm.connect()
        assert not connected, cookie
    comm = await presenter_socket(room, other_staff)
    await comm.disconnect()


@asynctest
async def test_a_participant_cannot_drive_reveal_fire_or_close(room, question):
    await db(votes.claim_open)(room=room, claim_key=question.claims[0].key)
    seat = await db(rooms.seat_join)(room=room, nickname="ana")
    comm = await join_socket(seat)
    for frame in [
        {"action": "drive", "question": question.slug, "tier": "senior"},
        {"action": "reveal"},
        {"action": "fire"},
        {"action": "close"},
        {"action": "claim", "claim": question.claims[1].key},
    ]:
        await send(comm, **frame)
        reply = await comm.receive_from(timeout=5)
        assert "Only the instructor can do that" in reply, frame
    await comm.disconnect()
    fresh = await db(Room.objects.select_related("claim_round").get)(pk=room.pk)
    assert fresh.tier == "" and fresh.question_slug == ""
    assert fresh.closed_at is None
    assert fresh.claim_round.revealed_at is None
    assert fresh.claim_round.claim_key == question.claims[0].key


@asynctest
async def test_the_instructor_drives_and_every_participant_follows(room, instructor, question):
    seats = [await db(rooms.seat_join)(room=room, nickname=n) for n in ("ana", "bo")]
    sockets = [await join_socket(s) for s in seats]
    presenter = await presenter_socket(room, instructor)
    await send(presenter, action="drive", question=question.slug, tier="solid")
    for comm in sockets:
        frame = await receive_until(comm, 'id="ws-stage"')
        assert question.title in frame
        assert 'data-tier="solid"' in frame
    for comm in [*sockets, presenter]:
        await comm.disconnect()


@asynctest
async def test_a_participant_receives_only_their_own_rooms_broadcasts(instructor, question):
    room_a = await db(rooms.room_create)(instructor=instructor, title="A")
    room_b = await db(rooms.room_create)(instructor=instructor, title="B")
    in_a = await join_socket(await db(rooms.seat_join)(room=room_a, nickname="ana"))
    in_b = await join_socket(await db(rooms.seat_join)(room=room_b, nickname="bo"))
    presenter_a = await presenter_socket(room_a, instructor)
    await send(presenter_a, action="drive", question=question.slug, tier="basics")
    await send(presenter_a, action="claim", claim=question.claims[0].key)
    await send(presenter_a, action="reveal")
    await receive_until(in_a, "The answer:")
    assert await in_b.receive_nothing(timeout=1)
    for comm in (in_a, in_b, presenter_a):
        await comm.disconnect()


@asynctest
async def test_a_malformed_frame_gets_an_error_to_that_client_only(room, question):
    await db(votes.claim_open)(room=room, claim_key=question.claims[0].key)
    sender = await join_socket(await db(rooms.seat_join)(room=room, nickname="ana"))
    bystander = await join_socket(await db(rooms.seat_join)(room=room, nickname="bo"))
    round_id = (await db(ClaimRound.objects.get)(room=room)).pk
    bad_frames = [
        "not json at all",
        json.dumps(["vote"]),
        json.dumps({"action": "vote", "round": str(round_id), "choice": "maybe"}),
        json.dumps({"action": "vote", "round": "abc", "choice": "holds"}),
        json.dumps({"action": "vote", "round": "\u00b2", "choice": "holds"}),  # "²" isdigit()
        json.dumps({"action": "vote", "round": {"x": 1}, "choice": "holds"}),
        json.dumps({"action": "vote", "round": str(round_id), "choice": "holds", "x": 1}),
        json.dumps({"action": "vote", "round": str(round_id), "choice": "holds" * 2000}),
        json.dumps({"action": "delete_everything"}),
    ]
    for text in bad_frames:
        await sender.send_to(text_data=text)
        reply = await sender.receive_from(timeout=5)
        assert 'id="ws-error"' in reply and "</p>" in reply
        assert reply.split(">", 1)[1].split("<", 1)[0].strip(), f"no message for {text[:40]}"
    assert await bystander.receive_nothing(timeout=0.5)
    assert await db(Vote.objects.count)() == 0
    await sender.disconnect()
    await bystander.disconnect()


@asynctest
async def test_frames_beyond_the_rate_limit_are_refused(room, question, monkeypatch):
    monkeypatch.setattr(ParticipantSocket, "frame_limit", 5)
    await db(votes.claim_open)(room=room, claim_key=question.claims[0].key)
    round_id = (await db(ClaimRound.objects.get)(room=room)).pk
    comm = await join_socket(await db(rooms.seat_join)(room=room, nickname="ana"))
    replies = []
    for n in range(7):
        choice = "holds" if n % 2 == 0 else "costs"
        await send(comm, action="vote", round=str(round_id), choice=choice)
        replies.append(await comm.receive_from(timeout=5))
    assert all("Your vote" in r for r in replies[:5])
    assert all("Too many messages" in r for r in replies[5:])
    vote = await db(Vote.objects.get)(round_id=round_id)
    assert vote.choice == "holds"  # the 5th frame (n=4) counted; the refused ones did not
    await comm.disconnect()


@asynctest
async def test_a_vote_before_the_reveal_replaces_and_after_it_is_refused(
    room, instructor, question
):
    claim = question.claims[0]
    await db(votes.claim_open)(room=room, claim_key=claim.key)
    round_id = (await db(ClaimRound.objects.get)(room=room)).pk
    voter = await join_socket(await db(rooms.seat_join)(room=room, nickname="ana"))
    watcher = await join_socket(await db(rooms.seat_join)(room=room, nickname="bo"))
    presenter = await presenter_socket(room, instructor)

    await send(voter, action="vote", round=str(round_id), choice="holds")
    assert "Holds up" in await receive_until(voter, 'id="ws-myvote"')
    # Joins redraw the count too (presence): wait for the one that counts this vote.
    await receive_until(presenter, '>1</strong> of <span class="present-of">2</span> present')
    await send(voter, action="vote", round=str(round_id), choice="costs")
    assert "Costs you the question" in await receive_until(voter, 'id="ws-myvote"')
    await receive_until(presenter, '>1</strong> of <span class="present-of">2</span> present')

    # The running count is the presenter's: other participants see nothing until the reveal.
    assert await watcher.receive_nothing(timeout=0.5)

    await send(presenter, action="reveal")
    right = "it holds up" if claim.holds else "it costs you the question"
    for comm in (voter, watcher, presenter):
        frame = await receive_until(comm, "The answer:")
        assert right in frame
        assert "Costs you the question: 1 (100%)" in frame

    await send(voter, action="vote", round=str(round_id), choice="holds")
    assert "votes are closed" in await receive_until(voter, 'id="ws-error"')
    votes_left = await db(list)(Vote.objects.values_list("choice", flat=True))
    assert votes_left == ["costs"]
    for comm in (voter, watcher, presenter):
        await comm.disconnect()


@asynctest
async def test_a_closed_room_ends_every_screen_and_refuses_new_sockets(room, instructor, question):
    await db(votes.claim_open)(room=room, claim_key=question.claims[0].key)
    round_id = (await db(ClaimRound.objects.get)(room=room)).pk
    seat = await db(rooms.seat_join)(room=room, nickname="ana")
    comm = await join_socket(seat)
    presenter = await presenter_socket(room, instructor)
    await send(presenter, action="close")
    assert "This workshop has ended" in await receive_until(comm, "ended")
    assert (await comm.receive_output(timeout=5))["type"] == "websocket.close"

    again = socket(
        f"/ws/workshop/{room.code}/", f"{rooms.seat_cookie_name(room.code)}={seat.token}"
    )
    connected, _ = await again.connect()
    assert connected  # accepted only to say so, then closed
    assert "This workshop has ended" in await again.receive_from(timeout=5)
    closing = await again.receive_output(timeout=5)
    assert closing == {"type": "websocket.close", "code": 4410}
    with pytest.raises(Exception, match="ended"):
        await db(votes.vote_cast)(seat=seat, round_id=round_id, choice="holds")
    assert await db(Vote.objects.count)() == 0
    await presenter.disconnect()


@asynctest
async def test_a_socket_from_another_origin_is_refused(room):
    seat = await db(rooms.seat_join)(room=room, nickname="ana")
    from channels.testing import WebsocketCommunicator

    from teachlab.asgi import application

    comm = WebsocketCommunicator(
        application,
        f"/ws/workshop/{room.code}/",
        headers=[
            (b"origin", b"http://evil.example"),
            (b"host", b"127.0.0.1"),
            (b"cookie", f"{rooms.seat_cookie_name(room.code)}={seat.token}".encode()),
        ],
    )
    connected, _ = await comm.connect()
    assert not connected


def _shared_run_for(room, instructor) -> str:
    """A fired shared run of the room, as shared_run_fire leaves it (no broker needed)."""
    from django.utils import timezone

    from lessons.models import Learner
    from teachlab.lab.models import Run
    from teachlab.workshop.models import SharedRun

    learner, _ = Learner.objects.get_or_create(user=instructor)
    run = Run.objects.create(
        learner=learner, lane="redis-short", params={"count": 1}, task_ids=["task-1"],
        label=f"room:{room.code}",
    )  # fmt: skip
    shared = SharedRun.objects.create(
        room=room, title="one task", prompt="How many?", run_id=run.id, fired_at=timezone.now()
    )
    Room.objects.filter(pk=room.pk).update(shared_run=shared)
    return run.id


def _append(run_id: str, kind: str) -> int:
    """One event of task-1's first copy, appended to the run's log as a worker does."""
    import time

    from teachlab.lab.eventlog.stream import entry_append

    seq, _ = entry_append(
        run_id=run_id, kind=kind, task_id="task-1", known_copy=1 if kind != "received" else 0,
        fields={"k": kind, "ti": "task-1", "i": "0", "w": "w1", "r": "0",
                "a": repr(time.time()), "n_tasks": "1"},
    )  # fmt: skip
    return seq


@asynctest
async def test_the_rooms_run_events_reach_its_screens_once_and_no_other_room(instructor):
    room_a = await db(rooms.room_create)(instructor=instructor, title="A")
    room_b = await db(rooms.room_create)(instructor=instructor, title="B")
    run_id = await db(_shared_run_for)(room_a, instructor)
    watcher = await join_socket(await db(rooms.seat_join)(room=room_a, nickname="ana"))
    other = await join_socket(await db(rooms.seat_join)(room=room_b, nickname="bo"))
    # Joining mid-run, the hub first redraws the run from what the lab reader holds (nothing).
    await receive_until(watcher, 'id="ws-live"')

    await db(_append)(run_id, "received")
    frame = await receive_until(watcher, 'id="rc-task-1-1"')
    assert 'hx-swap-oob="beforeend:#receipts-body"' in frame
    assert 'data-counter="receipts">1<' in frame
    await db(_append)(run_id, "finished")
    frame = await receive_until(watcher, 'id="out-task-1-1"')
    assert "executed" in frame
    assert 'id="rc-task-1-1"' not in frame  # the row is drawn once
    assert await watcher.receive_nothing(timeout=0.5)
    assert await other.receive_nothing(timeout=0.5)
    await watcher.disconnect()
    await other.disconnect()


@asynctest
async def test_a_burst_of_run_events_reaches_the_room_screens(instructor):
    room = await db(rooms.room_create)(instructor=instructor, title="batched")
    run_id = await db(_shared_run_for)(room, instructor)
    watcher = await join_socket(await db(rooms.seat_join)(room=room, nickname="cy"))
    await receive_until(watcher, 'id="ws-live"')

    await db(_append)(run_id, "received")
    await db(_append)(run_id, "finished")
    await receive_until(watcher, 'id="rc-task-1-1"')
    frame = await receive_until(watcher, "executed")
    assert 'id="out-task-1-1"' in frame
    await watcher.disconnect()


@asynctest
async def test_a_deeply_nested_frame_gets_an_error_and_the_socket_keeps_working(room, question):
    await db(votes.claim_open)(room=room, claim_key=question.claims[0].key)
    round_id = (await db(ClaimRound.objects.get)(room=room)).pk
    comm = await join_socket(await db(rooms.seat_join)(room=room, nickname="ana"))
    await comm.send_to(text_data="[" * 4000)  # small enough for the size limit, too deep to parse
    reply = await comm.receive_from(timeout=5)
    assert 'id="ws-error"' in reply and "not valid JSON" in reply
    await send(comm, action="vote", round=str(round_id), choice="holds")
    assert "Holds up" in await receive_until(comm, 'id="ws-myvote"')
    assert await db(Vote.objects.count)() == 1
    await comm.disconnect()


@asynctest
async def test_a_hostile_nickname_is_escaped_in_the_live_seat_list_and_the_outcome(
    room, instructor
):
    from django.utils import timezone

    from teachlab.workshop import predictions
    from teachlab.workshop.models import SharedRun

    nasty = "<svg onload=alert(1)>"
    presenter = await presenter_socket(room, instructor)
    seat = await db(rooms.seat_join)(room=room, nickname=nasty)
    seats = await receive_until(presenter, 'id="ws-seats"')
    assert nasty not in seats and "&lt;svg onload=alert(1)&gt;" in seats

    comm = await join_socket(seat)
    shared = await db(predictions.shared_run_open)(
        room=room, lane="redis-short", params={"count": 1}, metric="receipts"
    )
    await db(predictions.prediction_make)(seat=seat, shared_run_id=shared.pk, value=2)
    # As if the run had been fired and settled: the room sees the outcome, who came closest.
    await db(SharedRun.objects.filter(pk=shared.pk).update)(
        run_id="fake-run", fired_at=timezone.now()
    )
    shared = await db(SharedRun.objects.get)(pk=shared.pk)
    await db(predictions.shared_run_finish)(shared=shared, summary={"receipts": 2})
    for screen in (comm, presenter):
        outcome = await receive_until(screen, "Closest")
        assert nasty not in outcome and "&lt;svg onload=alert(1)&gt;" in outcome
    await comm.disconnect()
    await presenter.disconnect()


@asynctest
async def test_a_second_socket_of_the_same_seat_shares_its_frame_budget(
    room, question, monkeypatch
):
    monkeypatch.setattr(ParticipantSocket, "frame_limit", 3)
    await db(votes.claim_open)(room=room, claim_key=question.claims[0].key)
    round_id = (await db(ClaimRound.objects.get)(room=room)).pk
    seat = await db(rooms.seat_join)(room=room, nickname="ana")
    first, second = await join_socket(seat), await join_socket(seat)
    replies = []
    for comm in (first, second, first, second):
        await send(comm, action="vote", round=str(round_id), choice="holds")
        replies.append(await receive_until(comm, 'id="ws-'))
    assert all("Your vote" in r for r in replies[:3])
    assert "Too many messages" in replies[3]
    await first.disconnect()
    await second.disconnect()


@pytest.mark.django_db(transaction=True)
@asynctest
async def test_a_handshake_does_not_wait_behind_other_sockets_database_work(room):
    """Channels runs every socket's database calls in one shared thread; at 300 clients the
    soak's handshakes, votes and guesses queued there for up to 15 s. Ours go to the loop's
    thread pool (teachlab/core/dbasync.py): a join completes while that thread is busy."""
    import asyncio
    import time

    seat = await db(rooms.seat_join)(room=room, nickname="ana")
    busy = asyncio.ensure_future(db(time.sleep)(2.0))  # another socket's slow query
    await asyncio.sleep(0.1)
    started = time.monotonic()
    comm = await join_socket(seat)
    took = time.monotonic() - started
    await busy
    await comm.disconnect()
    assert took < 1.5, f"the handshake waited {took:.1f} s for the shared database thread"


@asynctest
async def test_a_vote_that_finds_the_database_busy_is_answered_and_can_be_sent_again(
    room, question, monkeypatch
):
    from django.db import OperationalError

    await db(votes.claim_open)(room=room, claim_key=question.claims[0].key)
    round_id = (await db(ClaimRound.objects.get)(room=room)).pk
    voter = await join_socket(await db(rooms.seat_join)(room=room, nickname="ana"))
    real = votes.votes_cast

    def busy(**kwargs):
        raise OperationalError("couldn't get a connection after 10.00 sec")

    monkeypatch.setattr(votes, "votes_cast", busy)
    await send(voter, action="vote", round=str(round_id), choice="holds")
    assert "database is busy" in await receive_until(voter, 'id="ws-error"')
    assert await db(Vote.objects.count)() == 0

    monkeypatch.setattr(votes, "votes_cast", real)  # the same socket, the same vote again
    await send(voter, action="vote", round=str(round_id), choice="holds")
    assert "Holds up" in await receive_until(voter, 'id="ws-myvote"')
    assert await db(Vote.objects.count)() == 1
    await voter.disconnect()

"""Presence, timed votes, answer rounds and the projector's socket, through the whole ASGI
stack and the real channel layer and Redis (the tests' private server)."""

from __future__ import annotations

import asyncio
import datetime
import re
import threading
import time

import pytest
import redis
from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import timezone

from teachlab.workshop import presence, rooms, rounds, roundstate, votes
from teachlab.workshop.models import Answer, AnswerRound, ClaimRound, Room, Vote
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
ANSWER_WORDS = ("Holds up", "holds up", "Costs you the question", "costs you the question")


async def screen_socket(room, user):
    cookie = await db(session_cookie)(user)
    comm = socket(f"/ws/workshop/{room.code}/screen/", cookie)
    connected, _ = await comm.connect()
    assert connected
    await comm.receive_from(timeout=5)
    return comm


def connected_text(n: int) -> str:
    return f'<strong class="present-count">{n}</strong> connected'


def answered_text(n: int, present: int) -> str:
    return (
        f'answered <strong class="answered-count">{n}</strong> of '
        f'<span class="present-of">{present}</span> present'
    )


def error_of(frame: str) -> str:
    found = re.search(r'id="ws-error"[^>]*>([^<]*)</p>', frame)
    return found.group(1) if found else ""


def _past() -> None:
    """Move every deadline a second into the past, as if the timers ran out."""
    past = timezone.now() - datetime.timedelta(seconds=1)
    ClaimRound.objects.update(closes_at=past)
    AnswerRound.objects.update(closes_at=past)


@asynctest
async def test_presence_counts_open_sockets_and_answers_out_of_those_present(
    room, instructor, question
):
    await db(rooms.room_drive)(room=room, question_slug=question.slug, tier="prompt")
    cr = await db(votes.claim_open)(room=room, claim_key=question.claims[0].key)
    ana_seat, bo_seat, cy_seat = [
        await db(rooms.seat_join)(room=room, nickname=n) for n in ("ana", "bo", "cy")
    ]
    screen = await screen_socket(room, instructor)
    console = await presenter_socket(room, instructor)
    ana = await join_socket(ana_seat)
    bo = await join_socket(bo_seat)
    for comm in (screen, console):
        await receive_until(comm, connected_text(2))

    await send(ana, action="vote", round=str(cr.pk), choice="holds")
    await receive_until(ana, "Your vote")
    for comm in (screen, console):
        await receive_until(comm, answered_text(1, 2))

    # Someone who voted leaves: the count is out of those still here, their vote kept apart.
    await ana.disconnect()
    frame = await receive_until(screen, answered_text(0, 1))
    assert "and 1 from people who left" in frame and connected_text(1) in frame
    # Someone joins mid-vote: counted as present straight away.
    cy = await join_socket(cy_seat)
    await receive_until(screen, answered_text(0, 2))
    # A second tab of the same seat is still one person.
    bo_again = await join_socket(bo_seat)
    assert await db(presence.present_seats)(room.pk) == {bo_seat.pk, cy_seat.pk}
    await bo.disconnect()
    assert await db(presence.present_seats)(room.pk) == {bo_seat.pk, cy_seat.pk}

    # A socket held by another server process counts (the entries live in Redis), and one
    # whose process died stops counting when its entry expires.
    thread = threading.Thread(
        target=asyncio.run,
        args=[presence.presence_enter(room_id=room.pk, seat_id=ana_seat.pk, socket_key="p2")],
    )
    thread.start()
    thread.join()
    client = redis.Redis.from_url(f"{settings.REDIS_URL}/{settings.REDIS_DB_APP}")
    client.zadd(presence.presence_key(room.pk), {f"{ana_seat.pk + 1000}:dead": time.time() - 1})
    present = await db(presence.present_seats)(room.pk)
    assert present == {ana_seat.pk, bo_seat.pk, cy_seat.pk}
    client.zrem(presence.presence_key(room.pk), f"{ana_seat.pk}:p2")

    for comm in (cy, bo_again):
        await comm.disconnect()
    await receive_until(screen, connected_text(0))
    for comm in (screen, console):
        await comm.disconnect()


@asynctest
async def test_the_vote_timer_reaches_every_screen_and_a_late_vote_is_refused(
    room, instructor, question
):
    await db(rooms.room_drive)(room=room, question_slug=question.slug, tier="prompt")
    cr = await db(votes.claim_open)(room=room, claim_key=question.claims[0].key)
    ana = await join_socket(await db(rooms.seat_join)(room=room, nickname="ana"))
    screen = await screen_socket(room, instructor)
    console = await presenter_socket(room, instructor)
    await db(rounds.claim_timer_start)(room=room, seconds=30)
    for comm in (ana, screen, console):
        # Wait for the timer itself: a redraw queued before it started (the seat list after
        # the join, under load) also carries an empty ws-claimtimer.
        frame = await receive_until(comm, 'data-remaining="')
        assert 'id="ws-claimtimer"' in frame
        remaining = float(re.search(r'data-remaining="([\d.]+)"', frame).group(1))
        assert 28 < remaining <= 30 and "Votes close in" in frame
    await send(ana, action="vote", round=str(cr.pk), choice="holds")
    await receive_until(ana, "Your vote")

    await db(_past)()
    await send(ana, action="vote", round=str(cr.pk), choice="costs")
    reply = await receive_until(ana, 'id="ws-error"')
    assert error_of(reply) == "Time is up: votes on this claim are closed."
    assert await db(lambda: list(Vote.objects.values_list("choice", flat=True)))() == ["holds"]
    for comm in (ana, screen, console):
        await comm.disconnect()


@asynctest
async def test_an_answer_round_takes_each_answer_once_checks_frames_and_then_shows_the_tiers(
    room, instructor, question
):
    await db(rooms.room_drive)(room=room, question_slug=question.slug, tier="solid")
    ana = await join_socket(await db(rooms.seat_join)(room=room, nickname="ana"))
    screen = await screen_socket(room, instructor)
    console = await presenter_socket(room, instructor)
    ar = await db(rounds.answer_round_open)(room=room, seconds=60)
    frame = await receive_until(ana, 'id="ws-answers"')
    assert 'name="text"' in frame and "Answers close in" in frame
    on_screen = await receive_until(screen, 'id="ws-answers"')  # with the stage, one frame
    assert 'data-tier="prompt"' in on_screen
    assert "Write your own answer on your phone" in on_screen and "<textarea" not in on_screen

    round_id = str(ar.pk)
    for bad in (
        {"action": "answer", "round": round_id},
        {"action": "answer", "round": "x1", "text": "hi"},
        {"action": "answer", "round": round_id, "text": "x" * 401},
        {"action": "answer", "round": round_id, "text": ["hi"]},
        {"action": "answer", "round": round_id, "text": "hi", "seat": "2"},
        {"action": "answer", "round": round_id, "text": " \u200b "},
        {"action": "answer", "round": str(ar.pk + 1), "text": "hi"},
    ):
        await send(ana, **bad)
        assert error_of(await receive_until(ana, 'id="ws-error"')), bad
    assert not await db(Answer.objects.exists)()

    await send(ana, action="answer", round=round_id, text="<b>retry</b> with backoff")
    mine = await receive_until(ana, 'id="ws-myanswer"')
    assert "Your answer is in" in mine and "&lt;b&gt;retry&lt;/b&gt; with backoff" in mine
    await send(ana, action="answer", round=round_id, text="an idempotent handler")
    await receive_until(ana, "an idempotent handler")
    await receive_until(screen, '<strong class="answer-count">1</strong> answer in')
    assert await db(lambda: list(Answer.objects.values_list("text", flat=True)))() == [
        "an idempotent handler"
    ]
    await send(console, action="answer", round=round_id, text="from the console")
    assert "does not vote" in error_of(await receive_until(console, 'id="ws-error"'))

    await db(_past)()
    await send(ana, action="answer", round=round_id, text="too late")
    assert error_of(await receive_until(ana, 'id="ws-error"')) == "Time is up: answers are closed."
    fresh = await db(Room.objects.get)(pk=room.pk)
    await db(rounds.answer_round_end)(room=fresh)
    ended = await receive_until(ana, 'id="ws-answers"')
    assert 'data-tier="basics"' in ended and "Answers are closed" in ended
    for comm in (ana, screen, console):
        await comm.disconnect()


@asynctest
async def test_the_projector_socket_is_the_instructors_and_only_listens(room, instructor, question):
    seat = await db(rooms.seat_join)(room=room, nickname="ana")
    learner = await db(make_user)("learner", staff=False)
    for cookie in (
        "",
        await db(session_cookie)(learner),
        f"{rooms.seat_cookie_name(room.code)}={seat.token}",
    ):
        comm = socket(f"/ws/workshop/{room.code}/screen/", cookie)
        connected, _ = await comm.connect()
        assert not connected, cookie

    screen = await screen_socket(room, instructor)
    for frame in (
        {"action": "drive", "question": question.slug, "tier": "senior"},
        {"action": "claim", "claim": question.claims[0].key},
        {"action": "reveal"},
        {"action": "close"},
        {"action": "vote", "round": "1", "choice": "holds"},
        {"action": "answer", "round": "1", "text": "hi"},
    ):
        await send(screen, **frame)
        assert error_of(await receive_until(screen, 'id="ws-error"')), frame
    fresh = await db(Room.objects.get)(pk=room.pk)
    assert fresh.question_slug == "" and fresh.closed_at is None
    assert fresh.claim_round_id is None

    console = await presenter_socket(room, instructor)
    await send(console, action="drive", question=question.slug, tier="prompt")
    assert question.title in await receive_until(screen, 'id="ws-stage"')
    await send(console, action="claim", claim=question.claims[0].key)
    frame = await receive_until(screen, 'id="ws-claim"')
    assert "Vote on your phone" in frame
    for words in (*ANSWER_WORDS, "<form", "<button", "ws-send"):
        assert words not in frame, words
    await send(console, action="reveal")
    assert "The answer:" in await receive_until(screen, 'id="ws-claim"')
    await send(console, action="close")
    await receive_until(screen, "This workshop has ended")
    await console.disconnect()


@asynctest
async def test_a_removed_seat_leaves_the_presence_and_answered_counts_at_once(
    room, instructor, question
):
    await db(rooms.room_drive)(room=room, question_slug=question.slug, tier="prompt")
    cr = await db(votes.claim_open)(room=room, claim_key=question.claims[0].key)
    ana_seat, bo_seat = [await db(rooms.seat_join)(room=room, nickname=n) for n in ("ana", "bo")]
    screen = await screen_socket(room, instructor)
    console = await presenter_socket(room, instructor)
    ana, bo = await join_socket(ana_seat), await join_socket(bo_seat)
    await send(ana, action="vote", round=str(cr.pk), choice="holds")
    await receive_until(ana, "Your vote")
    for comm in (screen, console):
        await receive_until(comm, answered_text(1, 2))

    # The kick closes Ana's socket, and the counts drop her before any disconnect arrives
    # from her browser: she is neither present nor "from people who left".
    await send(console, action="kick", seat=str(ana_seat.pk))
    await receive_until(ana, "removed")
    assert await ana.receive_output(timeout=5) == {"type": "websocket.close", "code": 4403}
    frame = await receive_until(screen, answered_text(0, 1))
    assert connected_text(1) in frame and "people who left" not in frame
    assert await db(presence.present_seats)(room.pk) == {bo_seat.pk}

    # Another process still holding her socket for a moment does not bring her back.
    thread = threading.Thread(
        target=asyncio.run,
        args=[presence.presence_enter(room_id=room.pk, seat_id=ana_seat.pk, socket_key="p2")],
    )
    thread.start()
    thread.join()
    room = await db(Room.objects.get)(pk=room.pk)
    counts = await db(roundstate.counts_context)(room)
    assert counts["present_count"] == 1 and counts["voted_present"] == 0
    assert counts["voted_left"] == 0
    redis.Redis.from_url(f"{settings.REDIS_URL}/{settings.REDIS_DB_APP}").zrem(
        presence.presence_key(room.pk), f"{ana_seat.pk}:p2"
    )
    for comm in (bo, screen, console):
        await comm.disconnect()

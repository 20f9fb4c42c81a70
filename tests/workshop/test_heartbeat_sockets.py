"""The room's heartbeat through the whole ASGI stack (heartbeat.py): a page that beats and
then falls silent, as behind a Wi-Fi drop that closes nothing, leaves the room's count."""

from __future__ import annotations

import time

import pytest
from channels.db import database_sync_to_async

from teachlab.workshop import heartbeat, presence, rooms
from tests.workshop.conftest import asynctest, join_socket, presenter_socket, receive_until
from tests.workshop.test_rounds_sockets import connected_text

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async


@pytest.fixture
def quick_silence(monkeypatch):
    """A second of silence instead of six, so the test waits less; the same code path."""
    monkeypatch.setattr(heartbeat, "SILENT_SECONDS", 1.0)
    monkeypatch.setattr(heartbeat, "CHECK_SECONDS", 0.2)


async def _ping(comm) -> None:
    await comm.send_to(text_data=heartbeat.PING)
    # Redraws (presence, counts) may come first; a refused ping would be an error frame.
    frame = await receive_until(comm, heartbeat.PONG, timeout=10)
    assert frame == heartbeat.PONG


@asynctest
async def test_a_beating_socket_that_falls_silent_leaves_the_count_and_its_next_beat_returns(
    room, instructor, quick_silence
):
    ana_seat = await db(rooms.seat_join)(room=room, nickname="ana")
    bo_seat = await db(rooms.seat_join)(room=room, nickname="bo")
    console = await presenter_socket(room, instructor)
    ana = await join_socket(ana_seat)
    bo = await join_socket(bo_seat)  # a script's socket: never beats
    await receive_until(console, connected_text(2))

    await _ping(ana)
    cut = time.monotonic()  # from here Ana's socket is open and silent
    await receive_until(console, connected_text(1), timeout=10)
    took = time.monotonic() - cut
    assert 1.0 <= took < 4, took  # SILENT_SECONDS, a check, a redraw (under load)
    assert await db(presence.present_seats)(room.pk) == {bo_seat.pk}

    await _ping(ana)  # the network is back: her next beat counts her in again
    await receive_until(console, connected_text(2), timeout=10)
    assert await db(presence.present_seats)(room.pk) == {ana_seat.pk, bo_seat.pk}
    for comm in (ana, bo, console):
        await comm.disconnect()


@asynctest
async def test_a_ping_is_answered_without_spending_the_frame_budget(room, instructor):
    ana = await join_socket(await db(rooms.seat_join)(room=room, nickname="ana"))
    for _ in range(60):  # more than a participant's frame budget (ratelimit.py)
        await _ping(ana)
    console = await presenter_socket(room, instructor)
    await _ping(console)
    for comm in (ana, console):
        await comm.disconnect()

"""A frame larger than settings.WS_MAX_FRAME_BYTES closes the socket (1009) instead of being
parsed: the lab's run socket and every workshop socket, through the whole ASGI stack."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from teachlab.core.socketframes import CLOSE_TOO_BIG
from teachlab.workshop import rooms
from tests.lab.test_consumer import _communicator, _finished_run, _learner_with_session
from tests.workshop.conftest import asynctest, join_socket, presenter_socket

pytestmark = pytest.mark.django_db(transaction=True)

OVERSIZED = "x" * (64 * 1024 + 1)


async def _closed_as_too_big(comm) -> dict:
    await comm.send_to(text_data=OVERSIZED)
    while True:  # redraws queued before the frame (presence, counts) may come first
        out = await comm.receive_output(timeout=5)
        if out["type"] == "websocket.close":
            return out
        assert "too large" not in out.get("text", ""), "the frame was read and answered"


@asynctest
async def test_an_oversized_frame_closes_the_run_socket_with_1009():
    learner, key = await sync_to_async(_learner_with_session)()
    run = await sync_to_async(_finished_run)(learner, receipts=1)
    ws = _communicator(run.id, key)
    assert (await ws.connect())[0]
    await ws.receive_from(timeout=5)
    out = await _closed_as_too_big(ws)
    assert out["code"] == CLOSE_TOO_BIG
    assert "too large" in out["reason"]


@asynctest
async def test_an_oversized_frame_closes_participant_and_presenter_sockets_with_1009(
    room, instructor
):
    seat = await sync_to_async(rooms.seat_join)(room=room, nickname="Ana")
    for comm in (await join_socket(seat), await presenter_socket(room, instructor)):
        out = await _closed_as_too_big(comm)
        assert out["code"] == CLOSE_TOO_BIG


@asynctest
async def test_a_frame_just_under_the_cap_is_read_as_usual(settings):
    settings.WS_MAX_FRAME_BYTES = 1000
    learner, key = await sync_to_async(_learner_with_session)()
    run = await sync_to_async(_finished_run)(learner, receipts=1)
    ws = _communicator(run.id, key)
    assert (await ws.connect())[0]
    await ws.receive_from(timeout=5)
    await ws.send_to(text_data="é" * 500)  # 1000 bytes: read, and answered as not understood
    assert "did not understand" in await ws.receive_from(timeout=5)
    await ws.send_to(text_data="é" * 501)  # 1002 bytes, 501 characters: over the cap
    assert (await ws.receive_output(timeout=5))["code"] == CLOSE_TOO_BIG

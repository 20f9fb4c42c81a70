"""Rooms, seats and sockets for the workshop tests: the real ASGI stack and channel layer."""

from __future__ import annotations

import functools
import json

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from lessons.catalog import all_questions
from teachlab.asgi import application
from teachlab.workshop import rooms

ORIGIN = (b"origin", b"http://127.0.0.1")


def asynctest(fn):
    """Run an async test body on its own loop (no pytest-asyncio here)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return async_to_sync(fn)(*args, **kwargs)

    return wrapper


def make_user(username: str, *, staff: bool):
    return get_user_model().objects.create_user(
        username=username, password="workshop-pass-123", is_staff=staff
    )


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


def seat_cookie(seat) -> str:
    return f"{rooms.seat_cookie_name(seat.room.code)}={seat.token}"


def socket(path: str, cookie: str = "") -> WebsocketCommunicator:
    headers = [ORIGIN, (b"host", b"127.0.0.1")]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    return WebsocketCommunicator(application, path, headers=headers)


async def join_socket(seat) -> WebsocketCommunicator:
    """A participant's socket, connected, with its first (state) frame already read."""
    comm = socket(f"/ws/workshop/{seat.room.code}/", seat_cookie(seat))
    connected, _ = await comm.connect()
    assert connected
    await comm.receive_from(timeout=5)
    return comm


async def presenter_socket(room, user, *, view: str = "present") -> WebsocketCommunicator:
    """The console's socket (or, with view="screen", the projector's), its state frame read."""
    cookie = await database_sync_to_async(session_cookie)(user)
    comm = socket(f"/ws/workshop/{room.code}/{view}/", cookie)
    connected, _ = await comm.connect()
    assert connected
    # The first console drawn in a session renders every template cold: seconds under load.
    await comm.receive_from(timeout=20)
    return comm


async def send(comm: WebsocketCommunicator, **frame) -> None:
    await comm.send_to(text_data=json.dumps(frame))


async def receive_until(comm: WebsocketCommunicator, needle: str, timeout: float = 5) -> str:
    """Frames until one contains `needle` (a broadcast may be preceded by others)."""
    while True:
        frame = await comm.receive_from(timeout=timeout)
        if needle in frame:
            return frame


@pytest.fixture
def instructor(db):
    return make_user("instructor", staff=True)


@pytest.fixture
def room(instructor):
    return rooms.room_create(instructor=instructor, title="Morning group")


@pytest.fixture
def question():
    """A lesson question with claims of both kinds (the content the app ships)."""
    for q in all_questions():
        if q.claims_cost and q.claims_hold:
            return q
    pytest.fail("no lesson question with claims; lessons/content is empty")


@pytest.fixture(scope="session")
def room_lab(live_server_url):
    """redis-short workers and the lab monitor (which settles runs and says so), on the
    session's private Redis and live database, for rooms that fire a shared run.

    When the lab's own session workers are already alive (tests/lab ran first), they are
    used; otherwise two workers of our own, under names of their own so the lab's worker
    registry and controls never mistake them for the lab tests' workers.
    """
    import subprocess
    import sys

    from tests.lab.workerpool import redis_short_workers
    from tests.stack import BASE_DIR, test_env

    workers = redis_short_workers("-room")
    monitor = subprocess.Popen(
        [sys.executable, "manage.py", "lab", "monitor"],
        cwd=BASE_DIR,
        env=test_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        if workers is not None:
            workers.start(timeout=90)
        yield workers
    finally:
        monitor.terminate()
        monitor.wait(timeout=10)
        if workers is not None:
            workers.stop()

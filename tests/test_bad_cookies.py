"""A crafted cookie holding a NUL character is no session and no seat, never a 500.

Python's cookie parser turns a quoted "\\000" into a NUL; PostgreSQL refuses a query with one
in it (an error, not a miss), so on PostgreSQL this broke every page and socket before
teachlab/core/cookies.py dropped such cookies. On SQLite it was a plain miss all along.
"""

from __future__ import annotations

import pytest
from django.test import Client

from teachlab.workshop import rooms
from tests.workshop.conftest import asynctest, make_user, socket

pytestmark = pytest.mark.django_db(transaction=True)

NUL8 = '"' + "\\000" * 8 + '"'


def test_a_nul_session_cookie_is_a_visitor_without_a_session():
    client = Client(HTTP_COOKIE=f"sessionid={NUL8}; csrftoken={NUL8}")
    response = client.get("/")
    assert response.status_code == 200


def test_a_nul_seat_cookie_is_no_seat(db):
    room = rooms.room_create(instructor=make_user("teacher", staff=True), title="Nul")
    client = Client(HTTP_COOKIE=f"{rooms.seat_cookie_name(room.code)}={NUL8}")
    response = client.get(f"/workshop/r/{room.code}/")
    assert response.status_code in (200, 302)  # the join form, as for anyone without a seat


@asynctest
async def test_a_socket_with_nul_cookies_is_refused_cleanly(db):
    from channels.db import database_sync_to_async

    room = await database_sync_to_async(rooms.room_create)(
        instructor=await database_sync_to_async(make_user)("teacher2", staff=True), title="Nul"
    )
    comm = socket(
        f"/ws/workshop/{room.code}/",
        f"sessionid={NUL8}; {rooms.seat_cookie_name(room.code)}={NUL8}",
    )
    connected, _ = await comm.connect(timeout=5)
    assert not connected  # no seat: refused, not an exception in the handshake
    await comm.disconnect()

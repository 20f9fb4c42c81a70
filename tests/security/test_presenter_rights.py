"""A presenter socket's rights are checked again on each action: a user demoted or signed out
after the socket opened can no longer drive the room through it."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async as db
from django.test import Client

from teachlab.workshop.models import Room
from tests.workshop.conftest import (
    asynctest,
    make_user,
    receive_until,
    send,
    socket,
)

pytestmark = pytest.mark.django_db(transaction=True)


def _signed_in(user) -> tuple[Client, str]:
    client = Client()
    client.force_login(user)
    return client, f"sessionid={client.cookies['sessionid'].value}"


async def _presenter(room, cookie: str):
    comm = socket(f"/ws/workshop/{room.code}/present/", cookie)
    assert (await comm.connect())[0]
    await comm.receive_from(timeout=5)
    return comm


async def _lock_refused(comm, room, says: str) -> None:
    await send(comm, action="lock", state="on")
    assert says in await receive_until(comm, says)
    assert not (await db(Room.objects.get)(pk=room.pk)).joins_locked


@asynctest
async def test_staff_demoted_after_connecting_can_no_longer_lock_the_room(room):
    colleague = await db(make_user)("colleague", staff=True)
    _, cookie = await db(_signed_in)(colleague)
    comm = await _presenter(room, cookie)
    colleague.is_staff = False
    await db(colleague.save)()
    await _lock_refused(comm, room, "Only the room")
    await comm.disconnect()


@asynctest
async def test_a_presenter_signed_out_after_connecting_is_refused(room, instructor):
    client, cookie = await db(_signed_in)(instructor)
    comm = await _presenter(room, cookie)
    await db(client.post)("/accounts/logout/")
    await _lock_refused(comm, room, "signed out")
    await comm.disconnect()


@asynctest
async def test_a_presenter_still_signed_in_locks_the_room(room, instructor):
    _, cookie = await db(_signed_in)(instructor)
    comm = await _presenter(room, cookie)
    await send(comm, action="lock", state="on")
    for _ in range(20):
        if (await db(Room.objects.get)(pk=room.pk)).joins_locked:
            break
        await comm.receive_from(timeout=5)
    assert (await db(Room.objects.get)(pk=room.pk)).joins_locked
    await comm.disconnect()

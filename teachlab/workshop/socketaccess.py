"""Who a room socket serves, read in the database thread: the seat a participant's cookie
names, the instructor (or staff) a presenter's session names, checked again per action."""

from __future__ import annotations

from importlib import import_module
from types import SimpleNamespace

from django.conf import settings
from django.contrib.auth import get_user

from teachlab.workshop import rooms, selectors
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import Room


def run_to_follow(room: Room) -> str:
    """The lab run the room's shared run still waits on, so the hub follows it ("" if none)."""
    shared = room.shared_run
    if shared is not None and shared.run_id and shared.observed is None:
        return shared.run_id
    return ""


def participant_identify(code: str, cookies: dict) -> tuple[Room, int] | None:
    """(room, seat id) for a seat cookie of the room with that code, else None (refused)."""
    room = selectors.room_for_code(code)
    if room is None:
        return None
    token = (cookies or {}).get(rooms.seat_cookie_name(room.code))
    seat = selectors.seat_for_token(room=room, token=token)
    if seat is None:
        return None
    return room, seat.pk


def driver_identify(code: str, user) -> Room | None:
    """The room with that code if `user` may drive it, else None (refused)."""
    room = selectors.room_for_code(code)
    if room is None or not rooms.can_drive(user=user, room=room):
        return None
    return room


def user_now(scope: dict):
    """The user the socket's session names now (AnonymousUser once it signed out or its
    password changed): the scope's user is the one at the handshake."""
    session = scope.get("session")
    key = getattr(session, "session_key", None)
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=key)
    return get_user(SimpleNamespace(session=store))


def driven_room(*, room_id: int, user_id: int, scope: dict) -> Room:
    """The room, if this socket's user may still drive it: the user and the session are read
    again for each action, so one demoted or signed out since the socket opened is refused."""
    room = Room.objects.get(pk=room_id)
    user = user_now(scope)
    if not user.is_authenticated:
        raise WorkshopError("You are signed out: sign in again to run the room.")
    if user.pk != user_id or not rooms.can_drive(user=user, room=room):
        raise WorkshopError("Only the room's instructor can do that.")
    return room

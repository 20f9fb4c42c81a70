"""Rooms and seats: create, join, find a seat again, drive the room, close it."""

from __future__ import annotations

import unicodedata

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from teachlab.workshop import broadcast, roundstate
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import CODE_ALPHABET, NICKNAME_MAX, Room, Seat, new_room_code

TIERS = ("prompt", "basics", "solid", "senior")
SEAT_COOKIE_PREFIX = "tl_seat_"


def seat_cookie_name(code: str) -> str:
    return f"{SEAT_COOKIE_PREFIX}{code}"


def normalise_code(raw: str) -> str:
    """Codes are typed on phones: ignore case, spaces and dashes."""
    return "".join(ch for ch in (raw or "").upper() if ch in CODE_ALPHABET)


def can_drive(*, user, room: Room) -> bool:
    """Only the room's instructor, or staff, may drive, reveal, fire or close."""
    return bool(
        user is not None
        and user.is_authenticated
        and user.is_active
        and (user.pk == room.instructor_id or user.is_staff)
    )


def can_create_rooms(*, user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_staff)


def room_create(*, instructor, title: str) -> Room:
    if not can_create_rooms(user=instructor):
        raise WorkshopError("Only staff accounts can create workshop rooms.")
    title = " ".join((title or "").split())[:120] or "Workshop"
    for _ in range(20):
        try:
            with transaction.atomic():
                return Room.objects.create(title=title, instructor=instructor, code=new_room_code())
        except IntegrityError:
            continue  # a code collision: 31^6 codes make this rare; draw again
    raise WorkshopError("Could not find a free join code; try again.")


def room_for_code(code: str) -> Room | None:
    code = normalise_code(code)
    if not code:
        return None
    return Room.objects.filter(code=code).first()


def clean_nickname(raw: str) -> str:
    """Collapse whitespace, drop control characters; the result is what everyone sees."""
    text = "".join(ch for ch in (raw or "") if unicodedata.category(ch)[0] != "C")
    text = " ".join(text.split())
    if not text:
        raise WorkshopError("Pick a nickname so the room can tell you apart.")
    if len(text) > NICKNAME_MAX:
        raise WorkshopError(f"Keep the nickname to {NICKNAME_MAX} characters or fewer.")
    return text


def seat_join(*, room: Room, nickname: str) -> Seat:
    if not room.is_open:
        raise WorkshopError("This workshop has ended; it takes no new participants.")
    nickname = clean_nickname(nickname)
    # A cap per room instead of a per-address limit: a classroom often shares one address, but
    # nothing should be able to fill a room with thousands of scripted seats.
    limit = getattr(settings, "WORKSHOP_MAX_SEATS", 500)
    if Seat.objects.filter(room=room).count() >= limit:
        raise WorkshopError(
            f"This room is full ({limit} participants). Ask the instructor to open another."
        )
    # Names that look the same are the same: "José" typed two ways, "Ａna" and "ana".
    key = unicodedata.normalize("NFKC", nickname).casefold()
    try:
        with transaction.atomic():
            seat = Seat.objects.create(room=room, nickname=nickname, nickname_key=key)
    except IntegrityError:
        raise WorkshopError(
            f"Someone in this room is already called “{nickname}”. Pick another nickname."
        ) from None
    broadcast.presenter_seats_changed(room=room)
    return seat


def seat_for_token(*, room: Room, token: str | None) -> Seat | None:
    if not token or len(token) > 64:
        return None
    return Seat.objects.filter(room=room, token=token).first()


def room_drive(*, room: Room, question_slug: str, tier: str) -> Room:
    """Show a question (and tier) on the presenter screen and every following participant's."""
    from teachlab.workshop import content

    require_open(room)
    if tier not in TIERS:
        raise WorkshopError(f"Unknown tier “{tier}”: pick one of {', '.join(TIERS)}.")
    if content.question(question_slug) is None:
        raise WorkshopError("That question is not in the lessons.")
    if tier != "prompt" and roundstate.tiers_hidden(room, question_slug):
        raise WorkshopError("The room is still writing its answers: end the answer round first.")
    room.question_slug = question_slug
    room.tier = tier
    room.save(update_fields=["question_slug", "tier"])
    broadcast.stage_changed(room=room)
    return room


def room_locked(pk: int) -> Room:
    """The room, its row locked until the transaction ends.

    Whatever reads the room's state and then writes on it (a vote, a guess, a reveal, a
    fire) takes this first, so two of them on one room happen one after the other. On
    PostgreSQL it is a row lock (FOR UPDATE); on SQLite the IMMEDIATE transaction already
    holds the database's write lock and Django leaves FOR UPDATE out. The open claim and run
    are not joined in: rows read in the same statement as the lock keep the version from
    before the wait, so they are read afterwards, by their own queries.
    """
    return Room.objects.select_for_update().get(pk=pk)


def room_close(*, room: Room) -> Room:
    # One UPDATE: it waits for a vote or guess holding the room's row lock, and of two
    # closes only one finds the room open and tells the room.
    now = timezone.now()
    if Room.objects.filter(pk=room.pk, closed_at__isnull=True).update(closed_at=now):
        room.closed_at = now
        broadcast.room_closed(room=room)
    elif room.closed_at is None:
        room.refresh_from_db(fields=["closed_at"])
    return room


def require_open(room: Room) -> None:
    if not room.is_open:
        raise WorkshopError("This workshop has ended; nothing more is accepted.")

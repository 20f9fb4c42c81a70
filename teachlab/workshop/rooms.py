"""Rooms and seats: create, join, moderate (lock, remove, readmit, rename), drive, close."""

from __future__ import annotations

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from teachlab.workshop import broadcast, content, names, roundstate
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import KEY_MAX, NICKNAME_MAX, Room, Seat, new_room_code
from teachlab.workshop.selectors import room_locked

TIERS = ("prompt", "basics", "solid", "senior")
SEAT_COOKIE_PREFIX = "tl_seat_"


def seat_cookie_name(code: str) -> str:
    return f"{SEAT_COOKIE_PREFIX}{code}"


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


def host_names(room: Room) -> list[str]:
    """What the room's instructor is called: a participant may not take any of it."""
    user = room.instructor
    # Username and full name only: a participant who shares the instructor's first name
    # alone ("Grace" in Grace Hopper's room) is not posing as them.
    return [n for n in (user.get_username(), user.get_full_name()) if n and n.strip()]


def nickname_check(*, room: Room, nickname: str, seat_pk: int | None = None) -> dict:
    """A nickname as shown, and its keys, once it passes every rule; WorkshopError if not.

    Rules: something visible is left after cleaning (names.nickname_clean); it does not pose
    as the instructor ("Instructor (host)", or their name); it neither equals (ignoring case)
    nor looks like (UTS #39 skeleton) the name of another seat of the room, removed seats
    included, so a removed seat's look-alike cannot come back under a new cookie.
    """
    shown = names.nickname_clean(nickname)
    key = names.nickname_key(shown)
    typed, folded = names.skeletons(shown)
    if max(len(key), len(typed), len(folded)) > KEY_MAX:
        raise WorkshopError(f"Keep the nickname to {NICKNAME_MAX} plain characters or fewer.")
    if names.is_profane(shown):
        raise WorkshopError(
            f"“{shown}” will be on the projector, and it reads as a swear word or an insult. "
            "Pick another nickname, or take one of the suggested names."
        )
    if names.impersonates_host(shown, host_names=host_names(room)):
        raise WorkshopError(
            f"“{shown}” looks like the instructor's name or title. Pick a nickname of your own."
        )
    clash = (
        Seat.objects.filter(room=room)
        .filter(Q(nickname_key=key) | Q(skeleton=typed) | Q(skeleton_folded=folded))
        .exclude(pk=seat_pk)
        .first()
    )
    if clash is not None:
        if clash.nickname_key == key:
            raise WorkshopError(
                f"Someone in this room is already called “{clash.nickname}”. Pick another nickname."
            )
        raise WorkshopError(
            f"“{shown}” looks too much like “{clash.nickname}”, who is already in this room. "
            "Pick a nickname that looks different."
        )
    return {"nickname": shown, "nickname_key": key, "skeleton": typed, "skeleton_folded": folded}


def seat_join(*, room: Room, nickname: str) -> Seat:
    """A new seat, if the room is open, not locked, not full, and the name passes."""
    with transaction.atomic():
        # The room's row lock: two joins of one room (two look-alikes, the last free seat)
        # are checked one after the other.
        locked = room_locked(room.pk)
        if not locked.is_open:
            raise WorkshopError("This workshop has ended; it takes no new participants.")
        if locked.joins_locked:
            raise WorkshopError(
                "The instructor has locked this room: it takes no new participants for now."
            )
        seats_free_check(room)
        fields = nickname_check(room=locked, nickname=nickname)
        try:
            with transaction.atomic():
                seat = Seat.objects.create(room=room, **fields)
        except IntegrityError:
            raise WorkshopError(
                f"Someone in this room is already called “{fields['nickname']}”. "
                "Pick another nickname."
            ) from None
    broadcast.presenter_seats_changed(room=room)
    return seat


def seats_free_check(room: Room) -> None:
    """A cap per room (settings.WORKSHOP_MAX_SEATS) on the seats taking part: nothing should
    fill a room with thousands of scripted seats, and seats the instructor removed free theirs
    (a removed seat comes back only through seat_readmit, which checks again)."""
    limit = settings.WORKSHOP_MAX_SEATS
    if Seat.objects.filter(room=room).seated().count() >= limit:
        raise WorkshopError(
            f"This room is full ({limit} participants). Ask the instructor to open another."
        )


def _room_seat(room: Room, seat_id: int) -> Seat:
    seat = Seat.objects.filter(room=room, pk=seat_id).first()
    if seat is None:
        raise WorkshopError("That participant is not in this room.")
    return seat


def _room_switch(room: Room, field: str, value: bool, tell) -> Room:
    """Turn one of an open room's switches and tell its screens."""
    room.require_open()
    Room.objects.filter(pk=room.pk).update(**{field: value})
    setattr(room, field, value)
    tell(room=room)
    return room


def room_lock(*, room: Room, locked: bool) -> Room:
    """Lock (or unlock) joins: seated participants stay and may reconnect; nobody new."""
    return _room_switch(room, "joins_locked", locked, broadcast.moderation_changed)


def room_leaderboard(*, room: Room, shown: bool) -> Room:
    """Show (or hide) the leaderboard on every screen of the room."""
    Room.objects.filter(pk=room.pk).update(leaderboard=shown)
    room.leaderboard = shown
    broadcast.leaderboard_changed(room=room)
    broadcast.moderation_changed(room=room)
    return room


def room_blank(*, room: Room, blanked: bool) -> Room:
    """Blank the projector (or bring it back): the room's state is kept, only hidden."""
    return _room_switch(room, "blanked", blanked, broadcast.blank_changed)


def seat_kick(*, room: Room, seat_id: int) -> Seat:
    """Remove a seat: its sockets are closed, its cookie seats nobody, its browser cannot
    join this room again, and its name stays taken, until the instructor readmits it."""
    seat = _room_seat(room, seat_id)
    if seat.kicked_at is None:
        seat.kicked_at = timezone.now()
        Seat.objects.filter(pk=seat.pk, kicked_at__isnull=True).update(kicked_at=seat.kicked_at)
        broadcast.seat_removed(room=room, seat=seat)
    return seat


def seat_readmit(*, room: Room, seat_id: int) -> Seat:
    """Undo a removal: the seat's cookie works again (its sockets reconnect on a reload)."""
    seat = _room_seat(room, seat_id)
    if seat.kicked_at is not None:
        seats_free_check(room)
        Seat.objects.filter(pk=seat.pk).update(kicked_at=None)
        seat.kicked_at = None
        broadcast.presenter_seats_changed(room=room)
    return seat


def seat_rename(*, room: Room, seat_id: int, nickname: str) -> Seat:
    """Give a seat another name, under the same rules as joining (its own name aside)."""
    with transaction.atomic():
        room_locked(room.pk)
        seat = _room_seat(room, seat_id)
        fields = nickname_check(room=room, nickname=nickname, seat_pk=seat.pk)
        try:
            with transaction.atomic():
                Seat.objects.filter(pk=seat.pk).update(**fields)
        except IntegrityError:
            raise WorkshopError(
                f"Someone in this room is already called “{fields['nickname']}”."
            ) from None
        for name, value in fields.items():
            setattr(seat, name, value)
    broadcast.seat_renamed(room=room, seat=seat)
    return seat


def room_drive(*, room: Room, question_slug: str, tier: str) -> Room:
    """Show a question (and tier) on the presenter screen and every following participant's."""
    room.require_open()
    if tier not in TIERS:
        raise WorkshopError(f"Unknown tier “{tier}”: pick one of {', '.join(TIERS)}.")
    if content.question(question_slug) is None:
        raise WorkshopError("That question is not in the lessons.")
    if tier != "prompt" and roundstate.tiers_hidden(room, question_slug):
        raise WorkshopError("The room is still writing its answers: end the answer round first.")
    room.question_slug = question_slug
    room.tier = tier
    room.staged_at = timezone.now()
    room.save(update_fields=["question_slug", "tier", "staged_at"])
    broadcast.stage_changed(room=room)
    return room


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

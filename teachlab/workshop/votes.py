"""Claim votes: the instructor puts a claim to the room, seats vote, the reveal closes it."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from teachlab.workshop import broadcast, content
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import ClaimRound, Room, Seat, Vote
from teachlab.workshop.selectors import room_locked, seat_present

CHOICES = {Vote.HOLDS, Vote.COSTS}


def claim_open(*, room: Room, claim_key: str) -> ClaimRound:
    """Put a lesson claim to the room; the previous one, if unrevealed, stops taking votes."""
    room.require_open()
    claim = content.claim(claim_key)
    if claim is None:
        raise WorkshopError("That claim is not in the lessons.")
    with transaction.atomic():
        room_locked(room.pk)
        ClaimRound.objects.filter(room=room, revealed_at__isnull=True).update(
            revealed_at=timezone.now()
        )
        cr = ClaimRound.objects.create(
            room=room,
            claim_key=claim.key,
            question_slug=claim.question_slug,
            text=claim.text,
            holds=claim.holds,
            why=claim.why or "",
            truth=claim.truth or "",
        )
        room.claim_round = cr
        room.save(update_fields=["claim_round"])
    broadcast.claim_changed(room=room)
    return cr


def vote_cast(*, seat: Seat, round_id: int, choice: str) -> Vote:
    """One vote per seat per claim: a second vote before the reveal replaces the first.

    The presenter's count is redrawn by the caller (broadcast.presenter_refresh_soon), once
    per burst of votes rather than once per voter.
    """
    if choice not in CHOICES:
        raise WorkshopError("Vote “holds up” or “costs you the question”.")
    with transaction.atomic():
        # The room's row lock (selectors.room_locked), so a reveal or a close racing this vote
        # lands wholly before or wholly after it.
        room = room_locked(seat.room_id)
        room.require_open()
        seat_present(seat)
        cr = room.claim_round
        if cr is None or cr.pk != round_id:
            raise WorkshopError("That claim is no longer open for votes.")
        if cr.revealed_at is not None:
            raise WorkshopError("The answer has been revealed; votes are closed.")
        if cr.closes_at is not None and timezone.now() >= cr.closes_at:  # the vote timer
            raise WorkshopError("Time is up: votes on this claim are closed.")
        vote = Vote(round_id=cr.pk, seat_id=seat.pk, choice=choice)
        Vote.objects.bulk_create(
            [vote],
            update_conflicts=True,
            unique_fields=["round", "seat"],
            update_fields=["choice", "cast_at"],
        )
    return vote


def claim_reveal(*, room: Room) -> ClaimRound:
    with transaction.atomic():
        locked = room_locked(room.pk)
        locked.require_open()
        cr = locked.claim_round
        if cr is None:
            raise WorkshopError("No claim is open: put one to the room first.")
        if cr.revealed_at is None:
            cr.revealed_at = timezone.now()
            cr.save(update_fields=["revealed_at"])
    room.claim_round = cr
    broadcast.claim_changed(room=room)
    return cr

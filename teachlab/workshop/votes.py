"""Claim votes: the instructor puts a claim to the room, seats vote, the reveal closes it."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from teachlab.workshop import broadcast, content
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import ClaimRound, Room, Seat, Vote
from teachlab.workshop.selectors import room_locked, seats_removed

CHOICES = {Vote.HOLDS, Vote.COSTS}


def claim_open(*, room: Room, claim_key: str) -> ClaimRound:
    """Put a lesson claim to the room; the previous one, if unrevealed, stops taking votes.

    It is closed, not revealed: nobody saw its answer, so it scores nobody (scores.py)."""
    room.require_open()
    claim = content.claim(claim_key)
    if claim is None:
        raise WorkshopError("That claim is not in the lessons.")
    with transaction.atomic():
        room_locked(room.pk)
        ClaimRound.objects.filter(
            room=room, revealed_at__isnull=True, closed_at__isnull=True
        ).update(closed_at=timezone.now())
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
    result = votes_cast(room_id=seat.room_id, ballots=[(seat.pk, round_id, choice)])[0]
    if isinstance(result, WorkshopError):
        raise result
    return result


def votes_cast(*, room_id: int, ballots: list[tuple[int, int, str]]) -> list[Vote | WorkshopError]:
    """Many (seat id, round id, choice) ballots in one room at once, in one transaction: the
    room's lock, the round's checks and the removed seats are read once and the votes go in
    as one upsert. 300 votes in the same second each paid for all of that on their own (about
    6 ms of a server process each, so the last voter waited seconds; scripts/bench_workshop.py).
    Each ballot gets its Vote, or the WorkshopError that refuses it; the same refusals as one
    at a time, in the same order of checks."""
    results: list[Vote | WorkshopError | None] = [None] * len(ballots)
    for i, (_, _, choice) in enumerate(ballots):
        if choice not in CHOICES:
            results[i] = WorkshopError("Vote “holds up” or “costs you the question”.")
    if all(r is not None for r in results):
        return results
    with transaction.atomic():
        # The room's row lock (selectors.room_locked), so a reveal or a close racing these
        # votes lands wholly before or wholly after them.
        room = room_locked(room_id)
        try:
            room.require_open()
            cr = room.claim_round
        except WorkshopError as exc:
            return [r or exc for r in results]
        removed = seats_removed(
            seat_id for (seat_id, _, _), r in zip(ballots, results, strict=True) if r is None
        )
        now = timezone.now()
        fresh: dict[int, Vote] = {}  # by seat: a seat's later ballot in the batch wins
        for i, (seat_id, round_id, choice) in enumerate(ballots):
            if results[i] is not None:
                continue
            if seat_id in removed:
                results[i] = WorkshopError("The instructor removed you from this room.")
            elif cr is None or cr.pk != round_id:
                results[i] = WorkshopError("That claim is no longer open for votes.")
            elif cr.closed_at is not None:
                results[i] = WorkshopError("That claim is no longer open for votes.")
            elif cr.revealed_at is not None:
                results[i] = WorkshopError("The answer has been revealed; votes are closed.")
            elif cr.closes_at is not None and now >= cr.closes_at:  # the vote timer
                results[i] = WorkshopError("Time is up: votes on this claim are closed.")
            else:
                results[i] = fresh[seat_id] = Vote(round_id=cr.pk, seat_id=seat_id, choice=choice)
        if fresh:
            Vote.objects.bulk_create(
                list(fresh.values()),
                update_conflicts=True,
                unique_fields=["round", "seat"],
                update_fields=["choice", "cast_at"],
            )
    return results


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

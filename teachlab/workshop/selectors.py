"""Reads of the workshop's rooms, seats, votes and guesses: no writes, no broadcasts.

The imports run one way (models ← selectors ← fragments ← broadcast ← services ← views and
consumers), so what draws a screen never needs the modules that change the room.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from django.db.models import Q

from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import (
    CODE_ALPHABET,
    ClaimRound,
    Prediction,
    Room,
    Seat,
    SharedRun,
    Vote,
)
from teachlab.workshop.names import skeletons


@dataclass(frozen=True)
class Tally:
    answered: int
    holds: int
    costs: int
    seats: int

    def share(self, n: int) -> int:
        return round(100 * n / self.answered) if self.answered else 0

    @property
    def holds_pct(self) -> int:
        return self.share(self.holds)

    @property
    def costs_pct(self) -> int:
        return self.share(self.costs)


@dataclass(frozen=True)
class Spread:
    """How the room's guesses are spread, for the presenter."""

    values: list[int]
    buckets: list[tuple[int, int]] = field(default_factory=list)  # (value, how many)

    @property
    def count(self) -> int:
        return len(self.values)

    @property
    def low(self) -> int | None:
        return min(self.values) if self.values else None

    @property
    def high(self) -> int | None:
        return max(self.values) if self.values else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.values else None

    @property
    def widest(self) -> int:
        return max((n for _, n in self.buckets), default=0)


@dataclass(frozen=True)
class Outcome:
    observed: int
    rows: list[tuple[str, int, int]]  # (nickname, predicted, off by), closest first
    closest: list[str]


def normalise_code(raw: str) -> str:
    """Codes are typed on phones: ignore case, spaces and dashes."""
    return "".join(ch for ch in (raw or "").upper() if ch in CODE_ALPHABET)


def room_for_code(code: str) -> Room | None:
    code = normalise_code(code)
    if not code:
        return None
    return Room.objects.filter(code=code).first()


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


def seat_for_token(*, room: Room, token: str | None) -> Seat | None:
    """The seat a cookie holds, unless the instructor removed it."""
    if not token or len(token) > 64:
        return None
    return Seat.objects.filter(room=room, token=token, kicked_at__isnull=True).first()


def seat_removed(*, room: Room, token: str | None) -> bool:
    """The cookie holds a seat the instructor removed: that browser may not join again."""
    if not token or len(token) > 64:
        return False
    return Seat.objects.filter(room=room, token=token, kicked_at__isnull=False).exists()


def seat_present(seat: Seat) -> None:
    """Refuse an answer from a seat the instructor removed (its socket may still be open in
    another server process for a moment)."""
    if Seat.objects.filter(pk=seat.pk, kicked_at__isnull=False).exists():
        raise WorkshopError("The instructor removed you from this room.")


def seats_removed(seat_ids) -> set[int]:
    """Which of these seats the instructor removed (seat_present for a batch)."""
    return set(
        Seat.objects.filter(pk__in=set(seat_ids), kicked_at__isnull=False).values_list(
            "pk", flat=True
        )
    )


SEATS_SHOWN = 30


def seats_find(*, room: Room, query: str = "") -> list[Seat]:
    """Seats for the presenter's moderation list: those whose name contains `query` (as
    typed, or by look-alike skeleton), else the latest to join; removed seats included."""
    seats = Seat.objects.filter(room=room)
    query = " ".join((query or "").split())[:40]
    if query:
        typed, folded = skeletons(query)
        seats = seats.filter(
            Q(nickname__icontains=query)
            | Q(skeleton__contains=typed)
            | Q(skeleton_folded__contains=folded)
        )
    return list(seats.order_by("-joined_at")[:SEATS_SHOWN])


def seat_count(room: Room) -> int:
    """Seats taking part: the instructor's removals do not count."""
    return Seat.objects.filter(room=room, kicked_at__isnull=True).count()


def tally(claim_round: ClaimRound) -> Tally:
    votes = list(claim_round.votes.values_list("choice", flat=True))
    return Tally(
        answered=len(votes),
        holds=votes.count(Vote.HOLDS),
        costs=votes.count(Vote.COSTS),
        seats=claim_round.room.seats.filter(kicked_at__isnull=True).count(),
    )


def vote_of(*, seat: Seat | None, claim_round: ClaimRound | None) -> Vote | None:
    if seat is None or claim_round is None:
        return None
    return Vote.objects.filter(round=claim_round, seat=seat).first()


def spread(shared: SharedRun) -> Spread:
    values = sorted(shared.predictions.values_list("value", flat=True))
    counts: dict[int, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return Spread(values=values, buckets=sorted(counts.items()))


def outcome(shared: SharedRun) -> Outcome | None:
    if shared.observed is None:
        return None
    rows = sorted(
        (
            (p.seat.nickname, p.value, abs(p.value - shared.observed))
            for p in shared.predictions.filter(seat__kicked_at__isnull=True).select_related("seat")
        ),
        key=lambda row: (row[2], row[0].casefold()),
    )
    best = rows[0][2] if rows else None
    return Outcome(
        observed=shared.observed,
        rows=rows,
        closest=[name for name, _, off in rows if off == best],
    )


def prediction_of(*, seat: Seat | None, shared: SharedRun | None) -> Prediction | None:
    if seat is None or shared is None:
        return None
    return Prediction.objects.filter(shared_run=shared, seat=seat).first()

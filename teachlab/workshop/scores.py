"""Where each participant stands: a run's ranking and the room's leaderboard (reads only).

Scoring rule of the leaderboard, on accuracy and never on speed (no time is read):
- a claim, once revealed, scores 1 for a vote on the right side and 0 otherwise;
- a shared run, once its outcome is stored, scores 1 − |predicted − observed| / max(observed, 1),
  never below 0: exactly right is 1, off by half the observed number is 0.5, off by the
  observed number or more is 0;
- an item a participant did not answer scores 0.
Equal scores share a place ("1, 2, 2, 4"), and so do equal distances in a run's ranking.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, OuterRef

from teachlab.workshop.models import Answer, ClaimRound, Prediction, Room, Seat, SharedRun, Vote

PAGE_SIZE = 20  # rows of a ranking or leaderboard per page: fits a phone without scrolling far
LEADERBOARD_TOP = 10


@dataclass(frozen=True)
class Ranked:
    place: int
    seat_id: int
    nickname: str
    value: int  # predicted
    off: int
    index: int  # position in the whole ranking, from 0

    @property
    def place_label(self) -> str:
        return ordinal(self.place)


@dataclass(frozen=True)
class Ranking:
    """One page of a run's ranking, and where `seat` stands in the whole of it."""

    shared_id: int
    observed: int
    rows: list[Ranked]
    page: int
    pages: int
    total: int
    mine: Ranked | None

    @property
    def previous(self) -> int | None:
        return self.page - 1 if self.page > 1 else None

    @property
    def next(self) -> int | None:
        return self.page + 1 if self.page < self.pages else None

    @property
    def my_page(self) -> int | None:
        return None if self.mine is None else page_of(self.mine.index, PAGE_SIZE)


@dataclass(frozen=True)
class Standing:
    place: int
    seat_id: int
    nickname: str
    score: float
    answered: int

    @property
    def place_label(self) -> str:
        return ordinal(self.place)


def ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def page_of(index: int, size: int) -> int:
    """The 1-based page that holds the row at 0-based `index`."""
    return index // size + 1


def _places(keys: list) -> list[int]:
    """Competition places for rows already sorted by `keys`: equal keys share a place."""
    places, previous = [], object()
    for i, key in enumerate(keys):
        places.append(places[-1] if key == previous else i + 1)
        previous = key
    return places


def run_ranking(shared: SharedRun) -> list[Ranked]:
    """Everyone who predicted and was not removed, closest first (ties by nickname, then seat)."""
    if shared.observed is None:
        return []
    rows = sorted(
        (
            (abs(value - shared.observed), nickname.casefold(), seat_id, nickname, value)
            for seat_id, nickname, value in Prediction.objects.filter(
                shared_run=shared, seat__kicked_at__isnull=True
            ).values_list("seat_id", "seat__nickname", "value")
        ),
    )
    places = _places([off for off, *_ in rows])
    return [
        Ranked(place=place, seat_id=seat_id, nickname=nickname, value=value, off=off, index=i)
        for i, (place, (off, _, seat_id, nickname, value)) in enumerate(
            zip(places, rows, strict=True)
        )
    ]


def ranking_page(
    shared: SharedRun, *, seat_id: int | None = None, page: int | None = None
) -> Ranking:
    """A page of the ranking: the one asked for, else the one holding `seat_id`'s row, else 1."""
    return ranking_from(run_ranking(shared), shared, seat_id=seat_id, page=page)


def ranking_from(
    rows: list[Ranked], shared: SharedRun, *, seat_id: int | None, page: int | None
) -> Ranking:
    pages = max(1, -(-len(rows) // PAGE_SIZE))
    mine = next((r for r in rows if r.seat_id == seat_id), None) if seat_id else None
    if page is None:
        page = page_of(mine.index, PAGE_SIZE) if mine is not None else 1
    page = min(max(1, page), pages)
    start = (page - 1) * PAGE_SIZE
    return Ranking(
        shared_id=shared.pk,
        observed=shared.observed if shared.observed is not None else 0,
        rows=rows[start : start + PAGE_SIZE],
        page=page,
        pages=pages,
        total=len(rows),
        mine=mine,
    )


def run_score(*, predicted: int, observed: int) -> float:
    return max(0.0, 1 - abs(predicted - observed) / max(observed, 1))


def took_part(room: Room):
    """Seats not removed that voted, predicted or answered at least once: a seat that joined
    and left before doing anything has no place on a leaderboard (the walk listed every
    abandoned seat)."""
    return Seat.objects.filter(room=room, kicked_at__isnull=True).filter(
        Exists(Vote.objects.filter(seat=OuterRef("pk")))
        | Exists(Prediction.objects.filter(seat=OuterRef("pk")))
        | Exists(Answer.objects.filter(seat=OuterRef("pk")))
    )


def leaderboard(room: Room) -> list[Standing]:
    """Every seat that took part and was not removed, by score over the revealed claims and
    settled runs (a claim closed without a reveal scores nobody)."""
    seats = dict(took_part(room).values_list("pk", "nickname"))
    score = dict.fromkeys(seats, 0.0)
    answered = dict.fromkeys(seats, 0)
    right = {
        cr.pk: cr.right_choice
        for cr in ClaimRound.objects.filter(room=room, revealed_at__isnull=False).only("holds")
    }
    for seat_id, round_id, choice in Vote.objects.filter(round_id__in=right).values_list(
        "seat_id", "round_id", "choice"
    ):
        if seat_id in score:
            answered[seat_id] += 1
            score[seat_id] += 1.0 if choice == right[round_id] else 0.0
    observed = dict(
        SharedRun.objects.filter(room=room, observed__isnull=False).values_list("pk", "observed")
    )
    for seat_id, run_id, value in Prediction.objects.filter(shared_run_id__in=observed).values_list(
        "seat_id", "shared_run_id", "value"
    ):
        if seat_id in score:
            answered[seat_id] += 1
            score[seat_id] += run_score(predicted=value, observed=observed[run_id])
    order = sorted(seats, key=lambda pk: (-round(score[pk], 6), seats[pk].casefold(), pk))
    places = _places([round(score[pk], 6) for pk in order])
    return [
        Standing(
            place=place,
            seat_id=pk,
            nickname=seats[pk],
            score=round(score[pk], 2),
            answered=answered[pk],
        )
        for place, pk in zip(places, order, strict=True)
    ]

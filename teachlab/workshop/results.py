"""What a finished workshop keeps: one row per participant, per claim, per shared run, per
participant and item (every vote, guess and typed answer, or its absence), and the leaderboard.

The CSVs are for a spreadsheet: UTF-8 with a byte order mark (without it Excel reads "José"
as "JosÃ©"), every time as "2026-12-05 14:03:07" in the room's local time zone
(settings.WORKSHOP_TIME_ZONE, named in the column's header), and counts taken against the
people present for an item: seats not removed that took part in the workshop at least once
and had joined before the item ended. A seat that joined and left without doing anything is
not counted as "unanswered" (presence is live only, so nothing finer is kept).
"""

from __future__ import annotations

import csv
import io
from datetime import datetime
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone

from teachlab.workshop import content
from teachlab.workshop.models import (
    Answer,
    AnswerRound,
    ClaimRound,
    Prediction,
    Room,
    Seat,
    SharedRun,
    Vote,
)
from teachlab.workshop.scores import leaderboard, run_score, took_part
from teachlab.workshop.selectors import outcome

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"  # read as a date and time by Excel, LibreOffice and Sheets
BOM = "\ufeff"


def export_zone() -> ZoneInfo:
    return ZoneInfo(settings.WORKSHOP_TIME_ZONE)


def _present(room: Room):
    """present(ended_at): the seats present for an item that ended then (module docstring)."""
    joined = dict(took_part(room).values_list("pk", "joined_at"))

    def present(ended_at) -> set[int]:
        end = ended_at or timezone.now()
        return {pk for pk, at in joined.items() if at <= end}

    return present


def participant_rows(room: Room) -> list[dict]:
    rounds = {cr.pk: cr for cr in room.claim_rounds.all()}
    closest: dict[str, int] = {}  # nickname -> runs where they came closest
    for shared in room.shared_runs.filter(observed__isnull=False):
        result = outcome(shared)
        for name in result.closest if result else []:
            closest[name] = closest.get(name, 0) + 1
    rows = []
    for seat in Seat.objects.filter(room=room).prefetch_related("votes", "predictions"):
        seat_votes = list(seat.votes.all())
        right = sum(
            1
            for v in seat_votes
            if v.round_id in rounds
            and rounds[v.round_id].revealed_at
            and v.choice == rounds[v.round_id].right_choice
        )
        rows.append(
            {
                "nickname": seat.nickname,
                "joined_at": seat.joined_at,
                "votes": len(seat_votes),
                "right": right,
                "predictions": len(list(seat.predictions.all())),
                "closest": closest.get(seat.nickname, 0),
            }
        )
    return rows


def claim_rows(room: Room) -> list[dict]:
    rounds = ClaimRound.objects.filter(room=room).annotate(
        n_holds=Count("votes", filter=Q(votes__choice=Vote.HOLDS)),
        n_costs=Count("votes", filter=Q(votes__choice=Vote.COSTS)),
    )
    present = _present(room)
    voters: dict[int, set[int]] = {}
    for round_id, seat_id in Vote.objects.filter(round__room=room).values_list(
        "round_id", "seat_id"
    ):
        voters.setdefault(round_id, set()).add(seat_id)
    rows = []
    for cr in rounds:
        answered = cr.n_holds + cr.n_costs
        right = cr.n_holds if cr.holds else cr.n_costs
        # A removed seat's vote stays counted, but never stands in for a present seat's.
        there = present(cr.revealed_at or cr.closed_at)
        rows.append(
            {
                "right": right,
                "present": len(there),
                "unanswered": len(there - voters.get(cr.pk, set())),
                "claim": cr.claim_key,
                "text": cr.text,
                "answer": "holds up" if cr.holds else "costs you the question",
                "holds": cr.n_holds,
                "costs": cr.n_costs,
                "answered": answered,
                "right_pct": round(100 * right / answered) if answered else 0,
                "opened_at": cr.opened_at,
                "revealed_at": cr.revealed_at,
                "closed_at": cr.closed_at,
            }
        )
    return rows


def run_rows(room: Room) -> list[dict]:
    present = _present(room)
    rows = []
    for shared in SharedRun.objects.filter(room=room):
        result = outcome(shared)
        guesses = dict(shared.predictions.values_list("seat_id", "value"))
        values = sorted(guesses.values())
        there = present(shared.fired_at)  # guesses close when the run is fired
        rows.append(
            {
                "title": shared.title,
                "prompt": shared.prompt,
                "metric": shared.metric,
                "present": len(there),
                "predictions": len(values),
                "unanswered": len(there - guesses.keys()),
                # The values themselves (this column once held their count), lowest first.
                "predicted": " ".join(map(str, values)),
                "observed": shared.observed,
                "closest": ", ".join(result.closest) if result else "",
                "settled_at": shared.settled_at,
                "run_id": shared.run_id,
            }
        )
    return rows


def _items(room: Room) -> list[tuple[str, object]]:
    """(kind, item) for every claim put to the room, shared run and answer round, in the
    order they were opened (ties by kind, then id)."""
    items: list[tuple] = []
    for cr in ClaimRound.objects.filter(room=room):
        items.append((cr.opened_at, "claim", cr))
    for shared in SharedRun.objects.filter(room=room):
        items.append((shared.opened_at, "run", shared))
    for ar in AnswerRound.objects.filter(room=room):
        items.append((ar.opened_at, "answer", ar))
    items.sort(key=lambda item: (item[0], item[1], item[2].pk))
    return [(kind, item) for _, kind, item in items]


def _given(room: Room) -> dict[str, dict]:
    """kind -> {(item id, seat id): the vote, guess or typed answer}, read once per kind."""
    votes = {
        (v.round_id, v.seat_id): v for v in Vote.objects.filter(round__room=room).only(
            "round_id", "seat_id", "choice", "cast_at"
        )
    }  # fmt: skip
    guesses = {
        (p.shared_run_id, p.seat_id): p
        for p in Prediction.objects.filter(shared_run__room=room).only(
            "shared_run_id", "seat_id", "value", "made_at"
        )
    }
    typed = {
        (a.round_id, a.seat_id): a
        for a in Answer.objects.filter(round__room=room).only(
            "round_id", "seat_id", "text", "written_at", "shown"
        )
    }
    return {"claim": votes, "run": guesses, "answer": typed}


def _answer_cells(item: AnswerRound, text: Answer | None) -> dict:
    question = content.question(item.question_slug)
    return {
        "question": question.title if question else item.question_slug,
        "answer": text.text if text else "",
        "on_screen": _yes(text.shown) if text else "",
        "answered_at": text.written_at if text else "",
    }


def _claim_cells(item: ClaimRound, vote: Vote | None) -> dict:
    labels = dict(Vote.CHOICES)
    revealed = item.revealed_at is not None
    right = vote is not None and vote.choice == item.right_choice
    return {
        "question": item.text,
        "right_answer": labels[item.right_choice] if revealed else "",
        "answer": labels[vote.choice] if vote else "",
        "correct": _yes(right) if vote and revealed else "",
        "off_by": "",
        "score": (1 if right else 0) if vote and revealed else "",
        "answered_at": vote.cast_at if vote else "",
    }


def _run_cells(item: SharedRun, guess: Prediction | None) -> dict:
    observed = item.observed
    settled = observed is not None
    scored = guess is not None and settled
    return {
        "question": item.prompt,
        "right_answer": observed if settled else "",
        "answer": guess.value if guess else "",
        "correct": _yes(guess.value == observed) if scored else "",
        "off_by": abs(guess.value - observed) if scored else "",
        "score": round(run_score(predicted=guess.value, observed=observed), 3) if scored else "",
        "answered_at": guess.made_at if guess else "",
    }


CELLS = {"answer": _answer_cells, "claim": _claim_cells, "run": _run_cells}


def answer_rows(room: Room) -> list[dict]:
    """One row per participant per item (each claim put to the room, each shared run, each
    answer round), in the order the items were opened: the vote, guess or typed answer,
    whether it was right (or how far off), and when it was last changed. An item a
    participant did not answer has a row too, with the answer left empty."""
    seats = list(Seat.objects.filter(room=room).order_by("joined_at", "pk"))
    items = _items(room)
    given = _given(room)
    rows = []
    for n, (kind, item) in enumerate(items, start=1):
        for seat in seats:
            row = {
                "nickname": seat.nickname,
                "item": n,
                "kind": kind,
                "removed": _yes(seat.kicked_at),
                "right_answer": "",
                "correct": "",
                "off_by": "",
                "score": "",
                "on_screen": "",
            }
            row.update(CELLS[kind](item, given[kind].get((item.pk, seat.pk))))
            rows.append(row)
    return rows


def score_rows(room: Room) -> list[dict]:
    """The leaderboard (scores.py: accuracy only), everyone still seated."""
    return [
        {"place": r.place, "nickname": r.nickname, "score": r.score, "answered": r.answered}
        for r in leaderboard(room)
    ]


def _yes(flag) -> str:
    return "yes" if flag else "no"


def _cell(value) -> str:
    """Spreadsheets run a cell that starts with = + - @ as a formula; nicknames are input."""
    if isinstance(value, datetime):
        return value.astimezone(export_zone()).strftime(TIME_FORMAT)
    text = "" if value is None else str(value)
    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + text
    return text


def header(column: str) -> str:
    """A time column's header names its zone: "opened_at (Europe/Berlin)"."""
    return f"{column} ({settings.WORKSHOP_TIME_ZONE})" if column.endswith("_at") else column


def rows_csv(rows: list[dict], columns: list[str]) -> str:
    out = io.StringIO()
    out.write(BOM)
    writer = csv.writer(out)
    writer.writerow([header(c) for c in columns])
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return out.getvalue()


EXPORTS = {
    "participants": (
        participant_rows,
        ["nickname", "joined_at", "votes", "right", "predictions", "closest"],
    ),
    "claims": (
        claim_rows,
        [
            "claim",
            "text",
            "answer",
            "holds",
            "costs",
            "present",
            "answered",
            "right",
            "unanswered",
            "right_pct",
            "opened_at",
            "revealed_at",
            "closed_at",
        ],
    ),
    "runs": (
        run_rows,
        [
            "title",
            "prompt",
            "metric",
            "present",
            "predictions",
            "unanswered",
            "predicted",
            "observed",
            "closest",
            "settled_at",
            "run_id",
        ],
    ),
    "answers": (
        answer_rows,
        [
            "nickname",
            "item",
            "kind",
            "question",
            "answer",
            "right_answer",
            "correct",
            "off_by",
            "score",
            "answered_at",
            "on_screen",
            "removed",
        ],
    ),
    "scores": (score_rows, ["place", "nickname", "score", "answered"]),
}

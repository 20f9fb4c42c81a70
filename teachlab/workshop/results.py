"""What a finished workshop keeps: one row per participant, per claim, per shared run."""

from __future__ import annotations

import csv
import io

from django.db.models import Count, Q

from teachlab.workshop.models import ClaimRound, Room, Seat, SharedRun, Vote
from teachlab.workshop.selectors import outcome


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
    rows = []
    for cr in rounds:
        answered = cr.n_holds + cr.n_costs
        right = cr.n_holds if cr.holds else cr.n_costs
        rows.append(
            {
                "claim": cr.claim_key,
                "text": cr.text,
                "answer": "holds up" if cr.holds else "costs you the question",
                "holds": cr.n_holds,
                "costs": cr.n_costs,
                "answered": answered,
                "right_pct": round(100 * right / answered) if answered else 0,
                "opened_at": cr.opened_at,
                "revealed_at": cr.revealed_at,
            }
        )
    return rows


def run_rows(room: Room) -> list[dict]:
    rows = []
    for shared in SharedRun.objects.filter(room=room):
        result = outcome(shared)
        rows.append(
            {
                "title": shared.title,
                "prompt": shared.prompt,
                "metric": shared.metric,
                "predictions": shared.predictions.count(),
                "observed": shared.observed,
                "closest": ", ".join(result.closest) if result else "",
                "run_id": shared.run_id,
            }
        )
    return rows


def _cell(value) -> str:
    """Spreadsheets run a cell that starts with = + - @ as a formula; nicknames are input."""
    text = "" if value is None else str(value)
    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + text
    return text


def rows_csv(rows: list[dict], columns: list[str]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
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
            "answered",
            "right_pct",
            "opened_at",
            "revealed_at",
        ],
    ),
    "runs": (
        run_rows,
        ["title", "prompt", "metric", "predictions", "observed", "closest", "run_id"],
    ),
}

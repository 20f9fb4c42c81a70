"""What the timed rounds, the console and the projector read: deadlines, the answer round,
who is present. Reads only (rounds.py changes these), so fragments can use it freely."""

from __future__ import annotations

import datetime

from django.utils import timezone

from teachlab.workshop import content, presence
from teachlab.workshop.models import Answer, AnswerRound, ClaimRound, Room, Seat


def seconds_left(closes_at) -> float | None:
    """Seconds until a deadline (0 once it passed), or None when there is no timer."""
    if closes_at is None:
        return None
    return max(0.0, (closes_at - timezone.now()).total_seconds())


def past(closes_at) -> bool:
    return closes_at is not None and timezone.now() >= closes_at


def claim_time_up(cr: ClaimRound | None) -> bool:
    """The vote timer ran out and the answer is not revealed yet: votes are refused."""
    return cr is not None and cr.revealed_at is None and past(cr.closes_at)


def answers_accepting(ar: AnswerRound | None) -> bool:
    return ar is not None and ar.ended_at is None and not past(ar.closes_at)


def tiers_hidden(room: Room, question_slug: str) -> bool:
    """While the room is still writing its own answers to a question, its tiers wait."""
    ar = room.answer_round
    return answers_accepting(ar) and ar.question_slug == question_slug


def round_context(room: Room, *, seat: Seat | None = None) -> dict:
    """What every screen's timed-round partials read. The answer lists are left as querysets
    (`answer_round.answers.all`), so only the screens that draw them ask for them."""
    cr = room.claim_round
    ar = room.answer_round
    accepting = answers_accepting(ar)
    return {
        # The projector shows the newer of a finished claim and a finished answer round, and
        # neither once the stage moved to another question.
        "claim_stale": _stale(cr, ar, room),
        "answers_stale": _stale(ar, cr, room),
        "claim_time_up": claim_time_up(cr),
        "claim_left": seconds_left(cr.closes_at) if cr and cr.revealed_at is None else None,
        "answer_round": ar,
        "answers_open": accepting,
        "answer_left": seconds_left(ar.closes_at) if accepting else None,
        "answer_question": _question_title(ar),
        "my_answer": Answer.objects.filter(round=ar, seat=seat).first() if ar and seat else None,
    }


def _stale(mine, other, room: Room) -> bool:
    if mine is None:
        return True
    if mine.question_slug != room.question_slug:
        return True
    return other is not None and other.opened_at > mine.opened_at


def _question_title(ar: AnswerRound | None) -> str:
    question = content.question(ar.question_slug) if ar else None
    return question.title if question else ""


def counts_context(room: Room) -> dict:
    """The live counts of the console and the projector: who is connected, and how many of
    them answered the open claim. A vote from someone who left is counted apart; seats the
    instructor removed count nowhere."""
    present = presence.present_seats(room.pk)
    if present:
        # A removed seat's socket is closed at once, but another process may still hold it
        # for a moment (or a dead process's entry lingers until its expiry): never count it.
        present = set(
            Seat.objects.filter(room=room, pk__in=present, kicked_at__isnull=True).values_list(
                "pk", flat=True
            )
        )
    ctx = {"present_count": None if present is None else len(present), "present_ids": present}
    cr = room.claim_round
    if cr is not None:
        # A removed seat's vote is neither "answered" nor "from people who left".
        voters = set(
            cr.votes.filter(seat__kicked_at__isnull=True).values_list("seat_id", flat=True)
        )
        ctx.update(
            voted=len(voters),
            voted_present=len(voters) if present is None else len(voters & present),
            voted_left=0 if present is None else len(voters - present),
        )
    ar = room.answer_round
    if ar is not None:
        ctx["answer_count"] = ar.answers.count()
    return ctx


# What the room is on now (issue 28): the projector shows only this moment, phones drop what
# is over, and the console says it. The newest of the stage, the claim, the answer round and
# the run is the current one, unless the console blanked the projector or put up the
# leaderboard, or the plan is past its last step (the podium).
MOMENT_LABELS = {
    "ended": "The room is closed",
    "blank": "A blank projector",
    "podium": "The podium: the top three",
    "leaderboard": "The leaderboard",
    "lobby": "The lobby: join code, QR code and names",
    "tier": "The question",
    "claim": "A claim vote",
    "answers": "An answer round",
    "run": "A prediction and shared run",
}
_EARLIEST = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)


def plan_finished(room: Room) -> bool:
    steps = room.plan_steps or []
    return bool(steps) and room.plan_at is not None and room.plan_at >= len(steps)


def moment(room: Room) -> str:
    if not room.is_open:
        return "ended"
    if room.blanked:
        return "blank"
    if plan_finished(room):
        return "podium"
    if room.leaderboard:
        return "leaderboard"
    candidates = []
    if room.question_slug:
        candidates.append((room.staged_at or _EARLIEST, 0, "tier"))
    for n, (thing, kind) in enumerate(
        ((room.claim_round, "claim"), (room.answer_round, "answers"), (room.shared_run, "run")),
        start=1,
    ):
        if thing is not None:
            candidates.append((thing.opened_at, n, kind))
    return max(candidates)[2] if candidates else "lobby"


def people_context(room: Room, present: set[int] | None) -> dict:
    """The console's per-person list: who is connected, and who answered what is open now
    (the claim's vote, the answer round, the run's prediction)."""
    kind = moment(room)
    done: set[int] = set()
    if kind == "claim" and room.claim_round is not None:
        done = set(room.claim_round.votes.values_list("seat_id", flat=True))
    elif kind == "answers" and room.answer_round is not None:
        done = set(room.answer_round.answers.values_list("seat_id", flat=True))
    elif kind == "run" and room.shared_run is not None:
        done = set(room.shared_run.predictions.values_list("seat_id", flat=True))
    seats = Seat.objects.filter(room=room, kicked_at__isnull=True).order_by("nickname", "pk")
    people = [
        {
            "pk": s.pk,
            "nickname": s.nickname,
            "present": present is not None and s.pk in present,
            "answered": s.pk in done,
        }
        for s in seats.only("pk", "nickname")
    ]
    return {
        "people": people,
        "people_asked": kind in ("claim", "answers", "run"),
        "people_answered": sum(p["answered"] for p in people),
    }

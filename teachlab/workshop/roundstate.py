"""What the timed rounds, the console and the projector read: deadlines, the answer round,
who is present. Reads only (rounds.py changes these), so fragments can use it freely."""

from __future__ import annotations

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
    ctx = {"present_count": None if present is None else len(present)}
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

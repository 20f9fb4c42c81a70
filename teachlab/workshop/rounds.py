"""Timed rounds: a vote timer, the spread's hide/show switch, and answer rounds.

Deadlines are kept on the server (ClaimRound.closes_at, AnswerRound.closes_at) and checked
when a vote or an answer is stored; the screens count down from the seconds left when they
were drawn (static/js/round-timer.js) and put the buttons away at zero.
"""

from __future__ import annotations

import datetime
import unicodedata

from django.db import transaction
from django.utils import timezone

from teachlab.workshop import broadcast, fragments, roundstate, screens
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import ANSWER_MAX, Answer, AnswerRound, Room, Seat, SharedRun
from teachlab.workshop.selectors import room_locked, seat_present

TIMER_MIN, TIMER_MAX = 5, 600
SHOWN_MAX = 6  # answers on the projector at once: a few, readable from the back


def _room_locked_open(pk: int) -> Room:
    """The room under its row lock (as every write on its rounds takes it), open."""
    room = room_locked(pk)
    room.require_open()
    return room


def timer_seconds(raw) -> int:
    try:
        seconds = int(str(raw).strip())
    except (TypeError, ValueError):
        raise WorkshopError("The timer takes a whole number of seconds.") from None
    if not TIMER_MIN <= seconds <= TIMER_MAX:
        raise WorkshopError(f"A timer runs {TIMER_MIN} to {TIMER_MAX} seconds.")
    return seconds


def _tell(room: Room, *, participant=(), presenter=(), screen=()) -> None:
    room.refresh_from_db()
    broadcast.send(
        room,
        participant=fragments.participant_html(room, list(participant)) if participant else "",
        presenter=fragments.presenter_html(room, list(presenter)) if presenter else "",
        screen=screens.screen_html(room, list(screen)) if screen else "",
    )


def claim_timer_start(*, room: Room, seconds) -> datetime.datetime:
    """Close the open claim's voting `seconds` from now (a second start moves the deadline)."""
    seconds = timer_seconds(seconds)
    with transaction.atomic():
        locked = _room_locked_open(room.pk)
        cr = locked.claim_round
        if cr is None or cr.revealed_at is not None:
            raise WorkshopError("No claim is open for votes: put one to the room first.")
        if roundstate.past(cr.closes_at):
            raise WorkshopError("Time is already up on this claim: reveal the answer.")
        cr.closes_at = timezone.now() + datetime.timedelta(seconds=seconds)
        cr.save(update_fields=["closes_at"])
    # Only the timer line: redrawing the claim would wipe each phone's "your vote".
    parts = ["claimtimer"]
    _tell(room, participant=parts, presenter=parts, screen=parts)
    return cr.closes_at


def spread_show(*, room: Room, shown: bool) -> SharedRun:
    """Show or hide the predictions' spread on the projector (the console always has it)."""
    with transaction.atomic():
        locked = _room_locked_open(room.pk)
        shared = locked.shared_run
        if shared is None:
            raise WorkshopError("Open a run for the room first.")
        shared.spread_shown = bool(shown)
        shared.save(update_fields=["spread_shown"])
    _tell(room, presenter=["spreadtoggle"], screen=["spread"])
    return shared


def answer_round_open(*, room: Room, seconds=None) -> AnswerRound:
    """Ask the room to write its own answer to the question on screen: the stage goes back
    to the question's prompt, and its tiers wait until the round ends."""
    closes_at = None
    if seconds not in (None, ""):
        closes_at = timezone.now() + datetime.timedelta(seconds=timer_seconds(seconds))
    with transaction.atomic():
        locked = _room_locked_open(room.pk)
        if not locked.question_slug:
            raise WorkshopError("Show a question first: the room answers its prompt.")
        AnswerRound.objects.filter(room=locked, ended_at__isnull=True).update(
            ended_at=timezone.now()
        )
        ar = AnswerRound.objects.create(
            room=locked, question_slug=locked.question_slug, closes_at=closes_at
        )
        locked.answer_round = ar
        locked.tier = "prompt"
        locked.save(update_fields=["answer_round", "tier"])
    _tell(
        room,
        participant=["stage", "banner", "answers"],
        presenter=["stage", "answers"],
        screen=["stage", "claim", "answers"],
    )
    return ar


def clean_answer(raw: str) -> str:
    """What a participant typed, as it will be shown: no control characters but line
    breaks, no runs of blank lines, within ANSWER_MAX characters."""
    text = "".join(ch for ch in (raw or "") if ch == "\n" or unicodedata.category(ch)[0] != "C")
    lines = [" ".join(line.split()) for line in text.split("\n")]
    text = "\n".join(line for n, line in enumerate(lines) if line or (n and lines[n - 1]))
    text = text.strip()
    if not text:
        raise WorkshopError("Type your answer first.")
    if len(text) > ANSWER_MAX:
        raise WorkshopError(f"Keep your answer to {ANSWER_MAX} characters or fewer.")
    return text


def answer_submit(*, seat: Seat, round_id: int, text: str) -> Answer:
    """One answer per seat per round; a new one before the round closes replaces it."""
    text = clean_answer(text)
    with transaction.atomic():
        room = _room_locked_open(seat.room_id)
        seat_present(seat)  # the instructor may have removed the seat since its socket opened
        ar = room.answer_round
        if ar is None or ar.pk != round_id:
            raise WorkshopError("That answer round is over.")
        if ar.ended_at is not None or roundstate.past(ar.closes_at):
            raise WorkshopError("Time is up: answers are closed.")
        answer = Answer(round=ar, seat_id=seat.pk, text=text, written_at=timezone.now())
        Answer.objects.bulk_create(
            [answer],
            update_conflicts=True,
            unique_fields=["round", "seat"],
            update_fields=["text", "written_at"],
        )
    return answer


def answer_round_end(*, room: Room) -> AnswerRound:
    """End the round and show the question's first tier: the answers are in."""
    with transaction.atomic():
        locked = _room_locked_open(room.pk)
        ar = locked.answer_round
        if ar is None:
            raise WorkshopError("No answer round to end: start one first.")
        if ar.ended_at is None:
            ar.ended_at = timezone.now()
            ar.save(update_fields=["ended_at"])
        if locked.question_slug == ar.question_slug and locked.tier == "prompt":
            locked.tier = "basics"
            locked.save(update_fields=["tier"])
    _tell(
        room,
        participant=["stage", "banner", "answers"],
        presenter=["stage", "answers"],
        screen=["stage", "claim", "answers"],
    )
    return ar


def answer_show(*, room: Room, answer_id: int, shown: bool) -> Answer:
    """Put one answer on the projector (no nickname) or take it off."""
    with transaction.atomic():
        locked = _room_locked_open(room.pk)
        ar = locked.answer_round
        answer = Answer.objects.filter(pk=answer_id, round=ar).first() if ar else None
        if answer is None:
            raise WorkshopError("That answer is not in the room's current round.")
        if roundstate.answers_accepting(ar):
            raise WorkshopError("Answers are still coming in: end the round first.")
        if shown and not answer.shown and ar.answers.filter(shown=True).count() >= SHOWN_MAX:
            raise WorkshopError(f"Up to {SHOWN_MAX} answers at once: hide one first.")
        answer.shown = bool(shown)
        answer.save(update_fields=["shown"])
    _tell(room, presenter=["answers"], screen=["answers"])
    return answer

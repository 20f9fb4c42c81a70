"""A room run from a session plan: Next and Previous apply a step through the very services
the console's own buttons call (rooms, votes, rounds, predictions), so a step does nothing a
click could not."""

from __future__ import annotations

from teachlab.workshop import broadcast, planformat, predictions, rooms, rounds, votes
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import Plan, Room


def room_from_plan(*, instructor, plan: Plan, title: str = "") -> Room:
    """A new room holding a copy of the plan's steps (checked again: a lesson may have gone)."""
    steps = planformat.steps_clean(plan.steps)
    if not steps:
        raise WorkshopError("This plan has no steps yet: add one, or create a free room.")
    room = rooms.room_create(instructor=instructor, title=title or plan.title)
    room.plan_title, room.plan_steps = plan.title, steps
    room.save(update_fields=["plan_title", "plan_steps"])
    return room


def step_apply(*, room: Room, step: dict) -> None:
    """Do what the step says, as the console's button for it would."""
    kind = step["kind"]
    if kind == "leaderboard":
        rooms.room_leaderboard(room=room, shown=True)
        return
    if room.leaderboard:
        # A leaderboard between rounds: the next step puts the room back to work.
        rooms.room_leaderboard(room=room, shown=False)
    if kind == "tier":
        rooms.room_drive(room=room, question_slug=step["question"], tier=step["tier"])
    elif kind == "claim":
        cr = room.claim_round
        if cr is not None and cr.claim_key == step["claim"] and cr.revealed_at is None:
            if cr.closed_at is None:
                return  # already open for votes: stepping back to it keeps its votes
        votes.claim_open(room=room, claim_key=step["claim"])
    elif kind == "answers":
        if room.question_slug != step["question"]:
            rooms.room_drive(room=room, question_slug=step["question"], tier="prompt")
        rounds.answer_round_open(room=room, seconds=step.get("seconds"))
    elif kind == "run":
        predictions.shared_run_open(
            room=room,
            lane=step["lane"],
            params=step["params"],
            prompt=step.get("prompt", ""),
            metric=step["metric"],
        )


def plan_go(*, room: Room, index: int) -> Room:
    """Apply step `index` of the room's plan and remember that the room is on it."""
    room.require_open()
    steps = room.plan_steps or []
    if not steps:
        raise WorkshopError("This room runs free: it was not started from a plan.")
    # One past the last step is the podium (the projector's closing slide).
    if not 0 <= index <= len(steps):
        raise WorkshopError(
            "That was the last step of the plan." if index >= 0 else "That is the first step."
        )
    if index < len(steps):
        step_apply(room=room, step=steps[index])
    Room.objects.filter(pk=room.pk).update(plan_at=index)
    room.refresh_from_db()
    broadcast.plan_moved(room=room)
    return room


def plan_next(*, room: Room) -> Room:
    return plan_go(room=room, index=0 if room.plan_at is None else room.plan_at + 1)


def plan_previous(*, room: Room) -> Room:
    if room.plan_at is None or room.plan_at == 0:
        raise WorkshopError("That is the first step.")
    return plan_go(room=room, index=room.plan_at - 1)

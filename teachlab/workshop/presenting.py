"""Every presenter action by name, one path for all of them: the console's buttons (HTTP,
htmx), its keys (which press those buttons) and a presenter socket's frames all call act(),
so a click, a key and a frame do exactly the same thing (issue 28).

`fields` are already checked for shape (forms.py for HTTP, frames.py for the socket); the
services check their meaning again. act() answers which console parts to redraw.
"""

from __future__ import annotations

from collections.abc import Callable

from teachlab.workshop import planrun, predictions, rooms, rounds, votes
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import Room

PLAN_PARTS = ["stage", "claims", "claim", "answers", "run", "plan"]


def _on_off(fields: dict, what: str) -> bool:
    state = fields.get("state")
    if state not in ("on", "off"):
        raise WorkshopError(f"{what} “on” or “off”.")
    return state == "on"


def _shown(fields: dict) -> bool:
    return str(fields.get("show", "")) == "1"


def _outcome(room: Room) -> None:
    shared = room.shared_run
    if shared is None or not shared.run_id:
        raise WorkshopError("Fire a run first.")
    if shared.observed is None and not predictions.shared_run_finish(shared=shared):
        raise WorkshopError("The lab has no summary for this run yet.")


def _run_open(room: Room, f: dict) -> None:
    predictions.shared_run_open(
        room=room,
        experiment_slug=f.get("experiment", ""),
        lane=f["lane"],
        params=f["params"],
        prompt=f.get("prompt", ""),
        metric=f["metric"],
    )


Action = Callable[[Room, dict, object], object]
ACTIONS: dict[str, tuple[Action, list[str]]] = {
    "drive": (
        lambda room, f, user: rooms.room_drive(
            room=room, question_slug=f["question"], tier=f["tier"]
        ),
        ["stage", "claims"],
    ),
    "claim": (lambda room, f, user: votes.claim_open(room=room, claim_key=f["claim"]), ["claim"]),
    "reveal": (lambda room, f, user: votes.claim_reveal(room=room), ["claim"]),
    "timer": (
        lambda room, f, user: rounds.claim_timer_start(room=room, seconds=f["seconds"]),
        ["claim"],
    ),
    "run": (lambda room, f, user: _run_open(room, f), ["run"]),
    "fire": (
        lambda room, f, user: predictions.shared_run_fire(room=room, instructor=user),
        ["run"],
    ),
    "outcome": (lambda room, f, user: _outcome(room), ["run"]),
    "spread": (
        lambda room, f, user: rounds.spread_show(room=room, shown=_shown(f)),
        ["spreadtoggle"],
    ),
    "answers_open": (
        lambda room, f, user: rounds.answer_round_open(room=room, seconds=f.get("seconds")),
        ["stage", "answers"],
    ),
    "answers_end": (lambda room, f, user: rounds.answer_round_end(room=room), ["stage", "answers"]),
    "answer_show": (
        lambda room, f, user: rounds.answer_show(room=room, answer_id=f["answer"], shown=_shown(f)),
        ["answers"],
    ),
    "close": (lambda room, f, user: rooms.room_close(room=room), ["ended"]),
    "plan_next": (lambda room, f, user: planrun.plan_next(room=room), PLAN_PARTS),
    "plan_previous": (lambda room, f, user: planrun.plan_previous(room=room), PLAN_PARTS),
    "blank": (
        lambda room, f, user: rooms.room_blank(
            room=room, blanked=_on_off(f, "Blank the projector")
        ),
        [],
    ),
    # Moderation: the panel's own views redraw the panel (actionviews._panel_answer).
    "lock": (
        lambda room, f, user: rooms.room_lock(room=room, locked=_on_off(f, "Lock joins")),
        [],
    ),
    "leaderboard": (
        lambda room, f, user: rooms.room_leaderboard(
            room=room, shown=_on_off(f, "Show the leaderboard")
        ),
        [],
    ),
    "kick": (lambda room, f, user: rooms.seat_kick(room=room, seat_id=f["seat"]), []),
    "readmit": (lambda room, f, user: rooms.seat_readmit(room=room, seat_id=f["seat"]), []),
    "rename": (
        lambda room, f, user: rooms.seat_rename(
            room=room, seat_id=f["seat"], nickname=f["nickname"]
        ),
        [],
    ),
}


def act(*, room: Room, action: str, fields: dict, user) -> list[str]:
    """Do a presenter action; the console parts it changes (the cockpit always follows)."""
    entry = ACTIONS.get(action)
    if entry is None:
        raise WorkshopError("Unknown action.")
    do, parts = entry
    do(room, fields, user)
    return parts

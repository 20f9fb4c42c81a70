"""How a session plan's steps read on screen: their kinds, one line each, where a room is."""

from __future__ import annotations

from teachlab.workshop import content
from teachlab.workshop.models import Room

KINDS = {
    "tier": "show a tier",
    "claim": "claim vote",
    "answers": "answer round",
    "run": "prediction and shared run",
    "leaderboard": "leaderboard",
}


def step_label(step: dict) -> str:
    """One line for a list of steps: what the room will see."""
    kind = step["kind"]
    if kind == "tier":
        q = content.question(step["question"])
        return f"{content.TIER_LABELS[step['tier']]}: {q.title if q else step['question']}"
    if kind == "claim":
        claim = content.claim(step["claim"])
        return f"Claim vote: {claim.text if claim else step['claim']}"
    if kind == "answers":
        q = content.question(step["question"])
        timer = f" ({step['seconds']} s)" if step.get("seconds") else ""
        return f"Answer round{timer}: {q.title if q else step['question']}"
    if kind == "run":
        params = ", ".join(f"{k} {v}" for k, v in step["params"].items()) or "lab defaults"
        metric = content.METRICS.get(step["metric"], step["metric"])
        return f"Predict {metric}, then a shared run on {step['lane']} ({params})"
    return "Leaderboard"


def plan_context(room: Room) -> dict:
    """The console's plan panel: every step, the one the room is on, and the next."""
    steps = room.plan_steps or []
    at = room.plan_at
    rows = [
        {
            "number": n + 1,
            "label": step_label(step),
            "current": n == at,
            "done": at is not None and n < at,
        }
        for n, step in enumerate(steps)
    ]
    following = 0 if at is None else at + 1
    return {
        "plan_rows": rows,
        "plan_current": rows[at] if at is not None and 0 <= at < len(rows) else None,
        "plan_next": rows[following] if following < len(rows) else None,
        "plan_has_previous": at is not None and at > 0,
        # One past the last step: the podium (planrun.plan_go).
        "plan_finished": bool(rows) and at is not None and at >= len(rows),
    }

"""What a workshop socket may send, checked before anything is looked up or stored.

htmx's ws-send posts a form as JSON: its fields (all strings) plus a HEADERS object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import ANSWER_MAX

MAX_FRAME_BYTES = 4096
# action -> {field: (kind, max length)}; "id" fields are positive integers sent as digits.
PARTICIPANT_ACTIONS = {
    "vote": {"round": ("id", 12), "choice": ("text", 8)},
    "predict": {"run": ("id", 12), "value": ("text", 12)},
    "answer": {"round": ("id", 12), "text": ("text", ANSWER_MAX)},
}
PRESENTER_ACTIONS = {
    "drive": {"question": ("text", 100), "tier": ("text", 20)},
    "claim": {"claim": ("text", 200)},
    "reveal": {},
    "timer": {"seconds": ("id", 4)},
    "fire": {},
    "outcome": {},
    "answers_end": {},
    "close": {},
    # The console's keys: L the leaderboard, B a blank projector (issue 28)
    "leaderboard": {"state": ("text", 8)},
    "blank": {"state": ("text", 8)},
    # A room started from a session plan: apply its next or previous step (planrun.py)
    "plan_next": {},
    "plan_previous": {},
    # Moderation (the presenter's panel posts these over HTTP; a script may use the socket)
    "lock": {"state": ("text", 8)},
    "kick": {"seat": ("id", 12)},
    "readmit": {"seat": ("id", 12)},
    "rename": {"seat": ("id", 12), "nickname": ("text", 100)},
}
ALLOWED_EXTRA = {"HEADERS", "action", "csrfmiddlewaretoken", "aid", "at"}
# A participant page's id for an action it resends until acknowledged (actionids.py).
AID_CHARS = frozenset("0123456789abcdef")
AID_MAX = 64


@dataclass(frozen=True)
class Frame:
    action: str
    fields: dict
    aid: str = ""
    at: int = 0  # when the page made the action (its clock, ms): a later one wins


def _at(data: dict) -> int:
    at = data.get("at", "0")
    if not isinstance(at, str) or not (at.isascii() and at.isdigit()) or len(at) > 15:
        raise WorkshopError("Malformed action time.")
    return int(at)


def _aid(data: dict) -> str:
    aid = data.get("aid", "")
    if not isinstance(aid, str) or len(aid) > AID_MAX or not set(aid) <= AID_CHARS:
        raise WorkshopError("Malformed action id.")
    return aid


def frame_aid(text: str | None) -> str:
    """The action id of a frame refused before it is read (the budget), or "": so the page
    hears that this action was not taken instead of waiting for it."""
    try:
        data = json.loads(text or "")
        return _aid(data) if isinstance(data, dict) else ""
    except (ValueError, RecursionError, WorkshopError):
        return ""


def frame_parse(text: str | None, *, presenter: bool) -> Frame:
    if text is None:
        raise WorkshopError("Send text frames only.")
    if len(text.encode()) > MAX_FRAME_BYTES:
        raise WorkshopError("That message is too large.")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # 4 KiB of "[[[[" nests deeper than the parser goes
        raise WorkshopError("That message was not valid JSON.") from None
    if not isinstance(data, dict):
        raise WorkshopError("A message must be a JSON object.")
    action = data.get("action")
    allowed = {**PARTICIPANT_ACTIONS, **PRESENTER_ACTIONS} if presenter else PARTICIPANT_ACTIONS
    if not isinstance(action, str) or action not in {**PARTICIPANT_ACTIONS, **PRESENTER_ACTIONS}:
        raise WorkshopError("Unknown action.")
    if action not in allowed:
        raise WorkshopError("Only the instructor can do that.")
    schema = allowed[action]
    unknown = set(data) - set(schema) - ALLOWED_EXTRA
    if unknown:
        raise WorkshopError(f"Unexpected field: {sorted(unknown)[0][:40]}")
    if "HEADERS" in data and not isinstance(data["HEADERS"], dict):
        raise WorkshopError("HEADERS must be an object.")
    fields = {}
    for name, (kind, limit) in schema.items():
        value = data.get(name)
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise WorkshopError(f"Missing or malformed field: {name}")
        value = str(value).strip()
        if not value or len(value) > limit:
            raise WorkshopError(f"Field {name} must be 1 to {limit} characters.")
        if kind == "id":
            if not (value.isascii() and value.isdigit()):  # "²" is a digit int() refuses
                raise WorkshopError(f"Field {name} must be a number.")
            value = int(value)
        fields[name] = value
    return Frame(action=action, fields=fields, aid=_aid(data), at=_at(data))

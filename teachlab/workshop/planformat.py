"""What a session plan's step is, and the one-file format a plan travels in.

One checker for every way a step arrives (the edit page's forms, an imported file, a room
started from a plan), so each bad step gets the same message: its number, kind and field.
"""

from __future__ import annotations

import json

from teachlab.workshop import content, predictions, rounds
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.plansteps import KINDS
from teachlab.workshop.rooms import TIERS

FORMAT = "teachlab-session-plan"
VERSION = 1
MAX_FILE_BYTES = 64 * 1024  # a hundred steps of a few fields each is under 20 KiB
MAX_STEPS = 100
TITLE_MAX = 120
PROMPT_MAX = 300

# kind -> the fields a step of that kind may carry ("kind" aside)
FIELDS = {
    "tier": {"question", "tier"},
    "claim": {"claim"},
    "answers": {"question", "seconds"},
    "run": {"lane", "params", "metric", "prompt"},
    "leaderboard": set(),
}


class StepError(WorkshopError):
    """A bad step, named by its number (from 1), kind and field."""

    def __init__(self, number: int, kind: str, field: str, problem: str) -> None:
        where = f"Step {number}" + (f" ({KINDS[kind]})" if kind in KINDS else "")
        super().__init__(f"{where}, {field}: {problem}" if field else f"{where}: {problem}")


def _text(raw: dict, name: str, limit: int, fail, *, required: bool = True) -> str:
    value = raw.get(name, "")
    if value is None:
        value = ""
    if not isinstance(value, str):
        fail(name, "must be text.")
    if "\x00" in value:  # PostgreSQL refuses NUL in text and JSON: a message, not a 500
        fail(name, "must not contain a NUL character.")
    value = " ".join(value.split())
    if required and not value:
        fail(name, "is missing.")
    if len(value) > limit:
        fail(name, f"must be {limit} characters or fewer.")
    return value


def _question(raw: dict, fail) -> str:
    slug = _text(raw, "question", 100, fail)
    if content.question(slug) is None:
        fail("question", f"“{slug}” is not a question in the lessons.")
    return slug


def _tier_step(raw: dict, fail) -> dict:
    step = {"question": _question(raw, fail)}
    tier = raw.get("tier")
    if tier not in TIERS:
        fail("tier", f"pick one of {', '.join(TIERS)}.")
    step["tier"] = tier
    return step


def _claim_step(raw: dict, fail) -> dict:
    key = _text(raw, "claim", 200, fail)
    if content.claim(key) is None:
        fail("claim", f"“{key}” is not a claim in the lessons.")
    return {"claim": key}


def _answers_step(raw: dict, fail) -> dict:
    step = {"question": _question(raw, fail)}
    seconds = raw.get("seconds")
    if seconds in (None, ""):
        step["seconds"] = None
    else:
        try:
            step["seconds"] = rounds.timer_seconds(seconds)
        except WorkshopError as exc:
            fail("seconds", exc.message)
    return step


def _run_step(raw: dict, fail) -> dict:
    lane = _text(raw, "lane", 40, fail)
    if lane not in dict(content.lanes()):
        fail(
            "lane",
            f"“{lane}” is not one of the lab's lanes ({', '.join(dict(content.lanes()))}).",
        )
    params = raw.get("params", {})
    if not isinstance(params, dict):
        fail("params", "must be an object.")
    try:
        params = predictions.clean_params(params)
    except WorkshopError as exc:
        fail("params", exc.message)
    metric = raw.get("metric") or "receipts"
    if metric not in content.METRICS:
        fail("metric", f"pick one of {', '.join(content.METRICS)}.")
    return {
        "lane": lane,
        "params": params,
        "metric": metric,
        "prompt": _text(raw, "prompt", PROMPT_MAX, fail, required=False),
    }


# kind -> its fields checked and cleaned, in the order they are stored (FIELDS says which)
CLEANERS = {
    "tier": _tier_step,
    "claim": _claim_step,
    "answers": _answers_step,
    "run": _run_step,
    "leaderboard": lambda raw, fail: {},
}


def step_clean(raw, number: int) -> dict:
    """The step as stored, or a StepError naming what is wrong with it."""
    if not isinstance(raw, dict):
        raise StepError(number, "", "", "must be an object with a “kind”.")
    kind = raw.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        shown = kind if isinstance(kind, str) else ""
        raise StepError(number, "", "kind", f"“{shown[:40]}” is not one of {', '.join(KINDS)}.")

    def fail(field: str, problem: str):
        raise StepError(number, kind, field, problem)

    unknown = sorted(set(raw) - FIELDS[kind] - {"kind"})
    if unknown:
        fail(str(unknown[0])[:40], "is not a field of this kind of step.")
    return {"kind": kind, **CLEANERS[kind](raw, fail)}


def steps_clean(raw) -> list[dict]:
    if not isinstance(raw, list):
        raise WorkshopError("“steps” must be a list of steps.")
    if len(raw) > MAX_STEPS:
        raise WorkshopError(f"A plan holds up to {MAX_STEPS} steps; this one has {len(raw)}.")
    return [step_clean(step, n) for n, step in enumerate(raw, start=1)]


def title_clean(raw) -> str:
    if not isinstance(raw, str):
        raise WorkshopError("The plan's title must be text.")
    if "\x00" in raw:  # PostgreSQL refuses NUL in text: a message, not a 500
        raise WorkshopError("The plan's title must not contain a NUL character.")
    title = " ".join(raw.split())
    if not title:
        raise WorkshopError("Give the plan a title.")
    if len(title) > TITLE_MAX:
        raise WorkshopError(f"Keep the title to {TITLE_MAX} characters or fewer.")
    return title


def plan_document(*, title: str, steps: list[dict]) -> dict:
    """The plan as one file: its format name and version first, so a reader knows it."""
    return {"format": FORMAT, "version": VERSION, "title": title, "steps": steps}


def plan_read(data: bytes) -> tuple[str, list[dict]]:
    """(title, steps) from an exported file, every step checked; WorkshopError if not."""
    if len(data) > MAX_FILE_BYTES:
        raise WorkshopError(f"A plan file is at most {MAX_FILE_BYTES // 1024} KiB.")
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise WorkshopError("That file is not JSON: export a plan and import that file.") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise WorkshopError(f"That file is not a session plan (its “format” is not “{FORMAT}”).")
    if doc.get("version") != VERSION:
        raise WorkshopError(
            f"That plan is format version {str(doc.get('version'))[:20]}; this site reads "
            f"version {VERSION}."
        )
    return title_clean(doc.get("title")), steps_clean(doc.get("steps"))

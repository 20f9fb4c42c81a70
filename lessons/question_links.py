"""Lessons point at each other by link, never by number.

A number ("question 5") is the file's place in one order, and the course order differs from
it, so the same text said 5 for what the course calls 6. Authors write a Markdown link to the
question's page instead, `[designing an idempotent task](/q/idempotent-task-design/)`, and the
validator refuses a link to a question (or tier) that no lesson file declares, and any text
that still numbers a question, on the line of the field that holds it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from lessons.lesson import Problem
from lessons.schema import TIERS
from lessons.yamlschema import Document, Loc

# `](/q/<slug>/)` or `](/q/<slug>/<tier>/)`, optionally with a #fragment.
QUESTION_LINK = re.compile(
    r"\]\(\s*/q/(?P<slug>[^/)#\s]*)/?(?:(?P<tier>[^/)#\s]+)/?)?(?:#[^)\s]*)?\)"
)
EXPERIMENT_LINK = re.compile(r"\]\(\s*/lab/experiments/(?P<slug>[^/)#\s]*)/?(?:#[^)\s]*)?\)")
NUMBERED = re.compile(r"\bquestions? (?:no\.? ?|#)?\d+\b", re.IGNORECASE)
# "measurement note 4" in prose (rendered as a link, lessons/rendering.py), or a link to one.
NOTE_MENTION = re.compile(r"\bmeasurement note (?P<n>\d+)\b|\]\(\s*/evidence/notes/(?P<to>\d+)/?\)")


def text_fields(data: Any, loc: Loc = ()) -> Iterator[tuple[Loc, str]]:
    """Every string value in a file's data, with where it is."""
    if isinstance(data, str):
        yield loc, data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from text_fields(value, (*loc, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from text_fields(value, (*loc, i))


def where(loc: Loc) -> str:
    """`tiers.solid`, `claims_cost[2].truth`: the field as an author finds it."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _line(doc: Document, loc: Loc, text: str, at: int) -> int:
    """The line of offset `at`: inside a block scalar (`|`, text over several lines) the lines
    below the key; a one-line value is on its key's line."""
    base = doc.line(loc)
    if "\n" not in text.rstrip("\n"):
        return base
    return base + 1 + text.count("\n", 0, at)


def link_problems(
    doc: Document,
    known: set[str],
    experiments: set[str] | None = None,
    notes: set[int] | None = None,
) -> list[Problem]:
    """Links to questions no file declares, to tiers that do not exist, to lab experiments
    that do not exist (when `experiments` is given), to measurement notes lessons/measurements.md
    does not have (when `notes` is given), and numbered references, in one file."""
    problems: list[Problem] = []
    for loc, text in text_fields(doc.data):
        for match in NOTE_MENTION.finditer(text) if notes is not None else ():
            number = int(match["n"] or match["to"])
            if number not in notes:
                message = f"{where(loc)}: lessons/measurements.md has no measurement note {number}"
                problems.append(Problem(doc.shown, _line(doc, loc, text, match.start()), message))
        for match in EXPERIMENT_LINK.finditer(text) if experiments is not None else ():
            if match["slug"] not in experiments:
                message = (
                    f"{where(loc)}: links to lab experiment {match['slug']!r}, which does not exist"
                )
                problems.append(Problem(doc.shown, _line(doc, loc, text, match.start()), message))
        for match in QUESTION_LINK.finditer(text):
            slug, tier = match["slug"], match["tier"]
            if slug not in known:
                message = f"{where(loc)}: links to question {slug!r}, which no lesson file declares"
            elif tier and tier not in TIERS:
                message = (
                    f"{where(loc)}: links to tier {tier!r} of {slug!r}; "
                    f"the tiers are {', '.join(TIERS)}"
                )
            else:
                continue
            problems.append(Problem(doc.shown, _line(doc, loc, text, match.start()), message))
        for match in NUMBERED.finditer(text):
            message = (
                f"{where(loc)}: {match[0]!r} numbers a question, and numbers change with the "
                "course order; link it instead: [its title](/q/<slug>/)"
            )
            problems.append(Problem(doc.shown, _line(doc, loc, text, match.start()), message))
    return problems

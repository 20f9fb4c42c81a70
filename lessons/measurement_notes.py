"""The measurement notes (lessons/measurements.md) as records a page can show: each numbered item
is a note, its bold opening its headline, and its `Command:` line, where it has one, the command
that was run; the paragraph above the list says where and on which versions they were measured,
which every note's page repeats. Read again when the file changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from lessons.evidence_context import facts_file

HEADLINE_MAX = 140
_ITEM = re.compile(r"^(\d+)\.\s+(.+?)(?=^\d+\.\s|^#|\Z)", re.M | re.S)
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_COMMAND = re.compile(r"^\s*Commands?:\s*(.+)$", re.I)


@dataclass(frozen=True)
class MeasurementNote:
    """`headline` is plain text (for a title or a row); `body` the whole item in Markdown,
    with the figures; `setting` the Markdown paragraph naming the stack, versions and date;
    `command` the Markdown of what was run, "" where the note does not record it."""

    number: int
    headline: str
    body: str
    setting: str
    command: str = ""


def _headline(text: str) -> str:
    """The bold opening, or the first sentence."""
    bold = _BOLD.match(text)
    return bold.group(1) if bold else re.split(r"(?<=\.)\s", text, maxsplit=1)[0]


def _plain(line: str) -> str:
    line = line.replace("`", "").replace("**", "").strip()
    if len(line) > HEADLINE_MAX:
        line = line[:HEADLINE_MAX].rsplit(" ", 1)[0] + "…"
    return line


@lru_cache(maxsize=4)
def _notes(path: str, stamp: int) -> dict[int, MeasurementNote]:
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    first = _ITEM.search(text)
    preamble = text[: first.start()] if first else text
    # The paragraphs above the list, less the heading and the note to authors.
    setting = "\n\n".join(
        para.strip()
        for para in re.split(r"\n\s*\n", preamble)
        if para.strip() and not para.lstrip().startswith("#") and "`measured:" not in para
    )
    found: dict[int, MeasurementNote] = {}
    for match in _ITEM.finditer(text):
        # Continuation lines are indented under the number; a blank line ends the item.
        item = re.split(r"\n\s*\n", match.group(2), maxsplit=1)[0]
        # A `Command:` line and the lines after it are the command, the lines before the note.
        lines = item.splitlines()
        at = next((i for i, line in enumerate(lines) if _COMMAND.match(line)), len(lines))
        command = " ".join(_COMMAND.sub(r"\1", " ".join(lines[at:])).split())
        joined = " ".join(" ".join(lines[:at]).split())
        number = int(match.group(1))
        found.setdefault(
            number,
            MeasurementNote(number, _plain(_headline(joined)), joined, setting, command),
        )
    return found


def measurement_notes(path: Path | None = None) -> dict[int, MeasurementNote]:
    """Every note by number; empty when the file is not there."""
    path = Path(path or facts_file())
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return {}
    return _notes(str(path), stamp)


def measurement_note(number: int) -> MeasurementNote | None:
    return measurement_notes().get(int(number))

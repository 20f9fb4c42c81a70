"""Lesson files for the tests: the sound fixtures, and a way to write a broken variant of one
and find the line a problem should point at."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
GOOD = FIXTURES / "01-fixture-countdown.yaml"


def good_text() -> str:
    return GOOD.read_text(encoding="utf-8")


def line_of(text: str, needle: str, start: int = 1) -> int:
    """1-based number of the first line at or after `start` that contains `needle`."""
    for number, line in enumerate(text.splitlines(), 1):
        if number >= start and needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the text")


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) >= 1, f"{old!r} not in the fixture"
    return text.replace(old, new, 1)


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path

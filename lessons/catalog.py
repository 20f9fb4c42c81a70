"""The lessons the app serves: loaded from lessons/content/ once per process and loaded
again when a file is added, removed or changed (its mtime), so an instructor's edit shows
without a restart, within settings.LESSONS_RECHECK_SECONDS (default 1 s).

The folder is looked at no more than once per that interval: every page asks for the
catalog several times, and globbing and stat()ing each lesson, experiment and seed file
each time was over a quarter of a server process's busy time in the 300-client soak.

A broken file is left out (the others keep working) and its problems are kept in
`catalog_problems()`, the same messages `validatelessons` prints, for pages to show.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from lessons.evidence_context import evidence_stamp, file_stamps
from lessons.lesson import (
    Claim,
    CodeSample,
    Followup,
    LessonError,
    Problem,
    Question,
    in_course_order,
)
from lessons.loader import check_files, lesson_dir, lesson_files

__all__ = [
    "Claim",
    "CodeSample",
    "Followup",
    "LessonError",
    "Problem",
    "Question",
    "all_claims",
    "all_questions",
    "catalog_problems",
    "get_claim",
    "get_question",
    "load_catalog",
]


@dataclass(frozen=True)
class Catalog:
    questions: list[Question]
    problems: list[Problem]
    by_slug: dict[str, Question]
    claims: dict[str, Claim]


_lock = threading.Lock()
_cache: dict[str, tuple[tuple, Catalog]] = {}
_looked: dict[str, float] = {}  # folder -> _clock() at its last look at the disk
_clock = time.monotonic


def recheck_seconds() -> float:
    return float(getattr(settings, "LESSONS_RECHECK_SECONDS", 1.0))


def load_catalog(directory: Path | None = None) -> Catalog:
    """The catalog of `directory` (default settings.LESSONS_DIR), reloaded when files change."""
    directory = Path(directory or lesson_dir())
    key = str(directory)
    cached = _cache.get(key)
    now = _clock()
    if cached is not None and now - _looked.get(key, -1e18) < recheck_seconds():
        return cached[1]
    files = lesson_files(directory)
    stamp = (file_stamps(files), evidence_stamp())
    _looked[key] = now
    if cached is not None and cached[0] == stamp:
        return cached[1]
    with _lock:
        checked = check_files(files)
        checked.questions = in_course_order(checked.questions)
        by_slug = {q.slug: q for q in checked.questions}
        claims = {c.key: c for q in checked.questions for c in q.claims}
        catalog = Catalog(checked.questions, checked.problems, by_slug, claims)
        _cache[str(directory)] = (stamp, catalog)
    return catalog


def all_questions() -> list[Question]:
    """Sound questions in course order (lessons.lesson.in_course_order), the one order every
    list of questions shows."""
    return load_catalog().questions


def get_question(slug: str) -> Question | None:
    return load_catalog().by_slug.get(slug)


def get_claim(key: str) -> Claim | None:
    """A claim by its key, `"<question slug>:<claim id>"`."""
    return load_catalog().claims.get(key)


def all_claims() -> list[Claim]:
    return [c for q in all_questions() for c in q.claims]


def catalog_problems() -> list[Problem]:
    """Problems of the files the app refused (empty when every file is sound)."""
    return load_catalog().problems


def require_sound(directory: Path | None = None) -> Catalog:
    """The catalog, or LessonError with every problem: for commands that must fail loudly."""
    catalog = load_catalog(directory)
    if catalog.problems:
        raise LessonError(catalog.problems)
    return catalog

"""The glossary: one YAML file (settings.GLOSSARY_FILE, default lessons/glossary.yaml) of the
words the lessons and the lab use, each with a one-line definition shown in place, a longer
one for /glossary/, and where the lab shows it.

It is checked by the lessons' own YAML validator (lessons/yamlschema.py), so a mistake is
reported as `path:line: message` like a lesson's, by `validatelessons` and on /glossary/. A
broken file leaves the glossary empty (pages then mark nothing) rather than failing a page.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from django.conf import settings
from pydantic import AfterValidator

from lessons.evidence_context import experiment_slugs
from lessons.lesson import Problem
from lessons.question_links import link_problems
from lessons.shown_paths import display_path
from lessons.yamlschema import (
    Slug,
    Text,
    YamlModel,
    count,
    document_load,
    document_validate,
    refusal,
)

SHORT_MAX = 200  # characters: the in-place definition is one line on a phone, more or less


def _one_line(value: str) -> str:
    value = value.strip()
    if "\n" in value:
        raise refusal("one_line", "must be one line (it is shown in place); put the rest in long")
    if len(value) > SHORT_MAX:
        raise refusal(
            "one_line",
            f"is {len(value)} characters; keep it to {SHORT_MAX} (the rest goes in long)",
        )
    return value


class TermModel(YamlModel):
    slug: Slug
    term: Text
    words: count(list[Text], 1, None)  # spellings marked in prose (a plural "s" also matches)
    code: list[Text] = []  # spellings marked when a whole `code` span is the word
    short: Annotated[Text, AfterValidator(_one_line)]
    long: Text
    in_the_lab: Text


class GlossaryModel(YamlModel):
    yaml_name = "glossary"
    terms: count(list[TermModel], 1, None)


@dataclass(frozen=True)
class Term:
    slug: str
    term: str
    words: tuple[str, ...]
    code: tuple[str, ...]
    short: str
    long: str
    in_the_lab: str


@dataclass(frozen=True)
class Glossary:
    terms: list[Term]
    problems: list[Problem]


def _clash_problems(doc, model: GlossaryModel) -> list[Problem]:
    """A slug, or a spelling, claimed by two terms: a page could not tell which one it means."""
    problems: list[Problem] = []
    slugs: dict[str, int] = {}
    spellings: dict[tuple[str, str], tuple[int, str]] = {}  # (field, word) -> (index, slug)
    for i, term in enumerate(model.terms):
        if term.slug in slugs:
            message = (
                f"terms[{i}].slug: duplicate slug {term.slug!r} (first on line {slugs[term.slug]})"
            )
            problems.append(doc.problem(("terms", i, "slug"), message))
        else:
            slugs[term.slug] = doc.line(("terms", i, "slug"))
        for field in ("words", "code"):
            for j, word in enumerate(getattr(term, field)):
                key = (field, word.casefold())
                first, owner = spellings.setdefault(key, (i, term.slug))
                if first != i:
                    message = (
                        f"terms[{i}].{field}[{j}]: {word!r} is already a spelling of {owner!r}"
                    )
                    problems.append(doc.problem(("terms", i, field, j), message))
    return problems


def check_glossary(path: Path, question_slugs: set[str]) -> Glossary:
    """The glossary in `path`, or no terms and every problem (links to questions are checked
    against `question_slugs`, like a lesson's, and links to lab experiments against the lab's
    experiment files)."""
    doc, problems = document_load(path, shown=display_path(path))
    if doc is None:
        return Glossary([], problems)
    model, problems = document_validate(doc, GlossaryModel)
    if model is None:
        return Glossary([], problems)
    problems = _clash_problems(doc, model) + link_problems(doc, question_slugs, experiment_slugs())
    if problems:
        return Glossary([], sorted(problems, key=lambda p: p.line))
    terms = [
        Term(t.slug, t.term, tuple(t.words), tuple(t.code), t.short, t.long, t.in_the_lab)
        for t in model.terms
    ]
    return Glossary(terms, [])


def glossary_path() -> Path:
    """settings.GLOSSARY_FILE, or glossary.yaml beside the lessons folder: the terms belong to
    a set of lessons (their links point into it), so another folder brings its own or none."""
    from lessons.loader import lesson_dir

    configured = getattr(settings, "GLOSSARY_FILE", "")
    return Path(configured) if configured else lesson_dir().parent / "glossary.yaml"


_lock = threading.Lock()
_cache: dict[str, tuple[tuple, Glossary, float]] = {}


def load_glossary() -> Glossary:
    """The glossary, read again when the file (or the set of questions) changes; looked at no
    more than once per LESSONS_RECHECK_SECONDS, like the lessons."""
    from lessons.catalog import load_catalog, recheck_seconds

    path = glossary_path()
    cached = _cache.get(str(path))
    now = time.monotonic()
    if cached is not None and now - cached[2] < recheck_seconds():
        return cached[1]
    try:
        stat = path.stat()
        stamp: tuple = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        stamp = ()
    slugs = set(load_catalog().by_slug)
    stamp = (stamp, tuple(sorted(slugs)))
    if cached is not None and cached[0] == stamp:
        _cache[str(path)] = (stamp, cached[1], now)
        return cached[1]
    with _lock:
        glossary = check_glossary(path, slugs) if stamp[0] else Glossary([], [])
        _cache[str(path)] = (stamp, glossary, now)
    return glossary

"""Seed documents as case studies (lessons/seed_cases.yaml): a learner sees "Payout timeouts at
12 hours", not a file name. The file is checked by the lessons' YAML validator, so a mistake is
reported as `path:line: message`; a lesson citing a seed with no case is refused on its line
(lessons/evidence.py)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.conf import settings

from lessons.shown_paths import display_path
from lessons.yamlschema import (
    Problem,
    Slug,
    Text,
    YamlModel,
    count,
    document_load,
    document_validate,
)


class SeedCase(YamlModel):
    """One case as the file gives it and pages show it (the model is frozen)."""

    seed: Text
    slug: Slug
    title: Text
    summary: Text  # Markdown, the project's own words


class CasesModel(YamlModel):
    yaml_name = "seed cases"
    cases: count(list[SeedCase], 1, None)


@dataclass(frozen=True)
class SeedCases:
    by_seed: dict[str, SeedCase]
    problems: list[Problem]

    def by_slug(self, slug: str) -> SeedCase | None:
        return next((c for c in self.by_seed.values() if c.slug == slug), None)


def seed_cases_file() -> Path:
    default = Path(settings.BASE_DIR) / "lessons" / "seed_cases.yaml"
    return Path(getattr(settings, "SEED_CASES_FILE", default))


def check_seed_cases(path: Path) -> SeedCases:
    """The cases in `path`, or none and every problem (a seed or slug named twice too)."""
    doc, problems = document_load(path, shown=display_path(path))
    if doc is None:
        return SeedCases({}, problems)
    model, problems = document_validate(doc, CasesModel)
    if model is None:
        return SeedCases({}, problems)
    seen: dict[tuple[str, str], int] = {}
    for i, case in enumerate(model.cases):
        for field in ("seed", "slug"):
            first = seen.setdefault((field, getattr(case, field)), i)
            if first != i:
                message = f"cases[{i}].{field}: {getattr(case, field)!r} is also cases[{first}]"
                problems.append(doc.problem(("cases", i, field), message))
    if problems:
        return SeedCases({}, problems)
    return SeedCases({c.seed: c for c in model.cases}, [])


@lru_cache(maxsize=4)
def _cases(path: str, stamp: int) -> SeedCases:
    return check_seed_cases(Path(path))


def seed_cases() -> SeedCases | None:
    """The cases, read again when the file changes; None when there is no file."""
    path = seed_cases_file()
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    return _cases(str(path), stamp)

"""What a lesson's evidence is checked against: the experiment files, the seed documents, the
measurement notes and the seed cases, read from where the settings put them. The loader
passes `evidence_context()` to the lesson models; the catalog reloads when `evidence_stamp()`
changes."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import yaml
from django.conf import settings

from lessons.experiment_refs import experiment_checks
from lessons.lab_versions import lab_versions
from lessons.seed_cases import seed_cases, seed_cases_file
from lessons.shown_paths import display_path
from lessons.yamlread import file_data

_FACT_ITEM = re.compile(r"^(\d+)\.\s", re.MULTILINE)


def experiments_dir() -> Path:
    default = Path(settings.BASE_DIR) / "lessons" / "experiments"
    return Path(getattr(settings, "EXPERIMENTS_DIR", default))


def experiments_dir_shown() -> str:
    return display_path(experiments_dir())


def seeds_dir() -> Path:
    default = Path(settings.BASE_DIR).parent / "shared" / "seeds"
    return Path(getattr(settings, "SEEDS_DIR", default))


def facts_file() -> Path:
    """The measurement notes: in the repository, so a deployed image shows them too."""
    default = Path(settings.BASE_DIR) / "lessons" / "measurements.md"
    return Path(getattr(settings, "BROKER_FACTS_FILE", default))


def experiment_slugs(directory: Path | None = None) -> set[str]:
    """Slugs read straight from the experiment files (a broken file still names its slug)."""
    slugs = set()
    for path in sorted(Path(directory or experiments_dir()).glob("*.yaml")):
        try:
            data = file_data(path)
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            data = None
        slug = data.get("slug") if isinstance(data, dict) else None
        if isinstance(slug, str):
            slugs.add(slug)
    return slugs


def evidence_context() -> dict:
    """What `experiment`, `seed` and `measured` are checked against. A seeds folder or facts
    file that is not there (a checkout without ../shared) leaves that kind unchecked; so does
    a seed-cases file that is missing or broken (validatelessons reports the broken one)."""
    seeds = seeds_dir()
    facts = facts_file()
    cases = seed_cases()
    return {
        "experiments": experiment_slugs(),
        "experiment_checks": experiment_checks(experiments_dir()),
        "lab_versions": lab_versions(),
        "seeds": {p.name for p in seeds.iterdir()} if seeds.is_dir() else None,
        "seed_cases": set(cases.by_seed) if cases is not None and not cases.problems else None,
        "facts": (
            {int(n) for n in _FACT_ITEM.findall(facts.read_text(encoding="utf-8"))}
            if facts.is_file()
            else None
        ),
    }


def evidence_stamp() -> tuple:
    """Changes when anything evidence is checked against changes (for the catalog's cache)."""
    paths = [*sorted(experiments_dir().glob("*.yaml")), facts_file(), seed_cases_file()]
    seeds = seeds_dir()
    if seeds.is_dir():
        paths.extend(sorted(seeds.iterdir()))
    return file_stamps(paths)


def file_stamps(paths: list[Path]) -> tuple:
    """(path, mtime, size) of each file that is there: changes when any of them changes."""
    out = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            continue
        out.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(out)


_QUOTE_MARKS = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def words_normal(text: str) -> str:
    """Text as a passage is matched: one space between words, straight quote marks."""
    return " ".join(text.translate(_QUOTE_MARKS).split())


@lru_cache(maxsize=16)
def _seed_text(path: str, stamp: int) -> str:
    return words_normal(Path(path).read_text(encoding="utf-8", errors="replace"))


def seed_says(seed: str, passage: str) -> bool:
    """Whether the seed file has `passage`, word for word (spacing and quote marks aside)."""
    path = seeds_dir() / seed
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return False
    return words_normal(passage) in _seed_text(str(path), stamp)

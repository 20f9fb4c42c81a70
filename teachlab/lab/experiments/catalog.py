"""Load and validate the experiment files; every problem comes back with file and line.

`experiments_load()` is what views and commands call; it refuses a catalog with problems so
a typo never reaches a learner as a half-working experiment.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml
from django.conf import settings
from pydantic import ValidationError

from lessons.shown_paths import display_path
from lessons.yamlread import file_data
from lessons.yamlschema import Problem, document_parse
from teachlab.lab.experiments.references import references_found
from teachlab.lab.experiments.schema import ExperimentModel
from teachlab.lab.experiments.schema_steps import steps_seconds
from teachlab.lab.experiments.schema_words import errors_found

log = logging.getLogger(__name__)
EXPERIMENTS_DIR = Path(settings.BASE_DIR) / "lessons" / "experiments"


def lessons_dir() -> Path:
    """The configured lessons folder (settings.LESSONS_DIR, TEACHLAB_LESSONS_DIR), read at each
    call so that claims resolve against the lessons the site actually serves."""
    return Path(settings.LESSONS_DIR)


@dataclass
class Experiment:
    slug: str
    order: int
    title: str
    question: str
    backs: list[dict]
    prediction: dict
    runs: list[dict]
    checks: list[dict]
    explanation: str
    links: list[dict] = field(default_factory=list)
    needs: dict = field(default_factory=dict)  # {"kombu": ">=5.7", "why": "..."}; {} for any
    # why its checks mean something when the lane's workers exit at start ("" when they do
    # not): `lab matrix` then runs it anyway instead of recording "workers fail"
    workers_may_exit: str = ""
    path: str = ""

    def run_named(self, name: str) -> dict:
        return next(run for run in self.runs if run["name"] == name)

    @property
    def seconds(self) -> float:
        """Longest this experiment takes: runs go side by side unless one waits `after` another."""
        ends: dict[str, float] = {}
        for run in self.runs:
            start = ends.get(run.get("after") or "", 0.0)
            ends[run["name"]] = start + steps_seconds(run["steps"])
        return max(ends.values())

    @property
    def lanes(self) -> list[str]:
        return sorted({run["lane"] for run in self.runs})

    @property
    def lessons(self) -> list[str]:
        return [back["lesson"] for back in self.backs]


class CatalogError(ValueError):
    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


# --- lessons and lanes the files refer to -------------------------------------------------


def lesson_claims(directory: Path | None = None) -> dict[str, set[str]]:
    """slug -> claim ids of every lesson file that parses (the lesson validator reports the rest)."""
    found: dict[str, set[str]] = {}
    for path in sorted((directory or lessons_dir()).glob("*.yaml")):
        try:
            data = file_data(path)
        except (OSError, yaml.YAMLError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("slug"), str):
            continue
        ids = set()
        for key in ("claims_cost", "claims_hold"):
            for claim in data.get(key) or []:
                if isinstance(claim, dict) and isinstance(claim.get("id"), str):
                    ids.add(claim["id"])
        found[data["slug"]] = ids
    return found


def known_lanes() -> set[str] | None:
    """Lane names from the lab's table, or None while it is not importable."""
    try:
        from teachlab.lab.runs.lanes import lanes
    except ImportError:
        return None
    return {lane.name for lane in lanes()}


# --- validation ------------------------------------------------------------------------------


def _yaml_problem(problem: Problem) -> Problem:
    """The reader's "YAML syntax error: …" in the experiments' words ("not valid YAML: …")."""
    for prefix in ("YAML syntax error: ", "YAML error: "):
        if problem.message.startswith(prefix):
            message = "not valid YAML: " + problem.message[len(prefix) :]
            return Problem(problem.path, problem.line, message)
    return problem


def experiment_validate(
    *,
    file: str,
    text: str,
    lessons: dict[str, set[str]] | None = None,
    lanes: set[str] | None = None,
) -> tuple[Experiment | None, list[Problem]]:
    """Check one experiment file: its schema (schema.py), then what it refers to
    (references.py); returns the experiment when it has no problems."""
    doc, problems = document_parse(text, shown=file)
    if doc is None:
        return None, [_yaml_problem(p) for p in problems]
    for _parent, key, line, _first in doc.duplicates:
        problems.append(Problem(file, line, f"`{key}` appears twice in the same mapping"))
    try:
        ExperimentModel.model_validate(doc.data)
    except ValidationError as exc:
        found = errors_found(exc)
    else:
        found = references_found(
            doc.data, file=file, lessons=lessons, lessons_dir=lessons_dir(), lanes=lanes
        )
    problems += [doc.problem(loc, message) for loc, message in found]
    if problems:
        return None, problems
    return _experiment(doc.data, file), []


def _experiment(data: dict, file: str) -> Experiment:
    """The validated file as the runner reads it: each condition names its run."""
    run_names = [run["name"] for run in data["runs"]]
    single = run_names[0] if len(run_names) == 1 else None

    def with_run(condition: dict) -> dict:
        return {"per": "run", **condition, "run": condition.get("run", single)}

    prediction = dict(data["prediction"])
    if prediction["kind"] == "number":
        prediction["observe"] = {
            **prediction["observe"],
            "run": prediction["observe"].get("run", single),
        }
    else:
        prediction["choices"] = [
            {**ch, "when": with_run(ch["when"])} for ch in prediction["choices"]
        ]
    if prediction.get("timing"):
        timing = dict(prediction["timing"])
        timing["choices"] = [{**ch, "when": with_run(ch["when"])} for ch in timing["choices"]]
        prediction["timing"] = timing
    runs = []
    for run in data["runs"]:
        steps = [
            {"until": {"per": "run", "run": run["name"], **step["until"]}}
            if isinstance(step, Mapping) and "until" in step
            else step
            for step in run["steps"]
        ]
        runs.append(
            {
                "feeder": False,
                "after": None,
                **run,
                "steps": steps,
                "params": dict(run.get("params") or {}),
            }
        )
    return Experiment(
        slug=data["slug"],
        order=data["order"],
        title=data["title"].strip(),
        question=data["question"],
        backs=data["backs"],
        prediction=prediction,
        runs=runs,
        checks=[with_run(check) for check in data["checks"]],
        explanation=data["explanation"],
        links=data.get("links") or [],
        needs=dict(data.get("needs") or {}),
        workers_may_exit=str(data.get("workers_may_exit") or "").strip(),
        path=file,
    )


def catalog_validate(
    *,
    directory: Path = EXPERIMENTS_DIR,
    lessons: Path | None = None,
    check_lessons: bool = True,
) -> tuple[list[Experiment], list[Problem]]:
    """Every experiment file in `directory`, and every problem across them."""
    claims = lesson_claims(lessons) if check_lessons else None
    lanes = known_lanes()
    experiments: list[Experiment] = []
    problems: list[Problem] = []
    for path in sorted(directory.glob("*.yaml")):
        file = display_path(path)  # the lessons validator's rule: project-relative paths
        experiment, found = experiment_validate(
            file=file, text=path.read_text(encoding="utf-8"), lessons=claims, lanes=lanes
        )
        problems.extend(found)
        if experiment is not None:
            experiments.append(experiment)
    orders: dict[int, str] = {}
    for experiment in experiments:
        if experiment.order in orders:
            problems.append(
                Problem(
                    experiment.path,
                    1,
                    f"`order` {experiment.order} is also used by {orders[experiment.order]}",
                )
            )
        orders[experiment.order] = experiment.slug
    return sorted(experiments, key=lambda e: e.order), problems


@lru_cache(maxsize=2)
def _cached(directory: str, stamp: tuple, strict: bool) -> tuple[tuple[Experiment, ...], tuple]:
    experiments, problems = catalog_validate(directory=Path(directory), check_lessons=strict)
    return tuple(experiments), tuple(problems)


def experiments_load(
    *, directory: Path = EXPERIMENTS_DIR, strict: bool = False
) -> list[Experiment]:
    """The catalog in order, reloaded when a file changes.

    Pages use the lenient form: a broken file is left out (and logged) instead of breaking
    every page, and a renamed lesson claim does not hide an experiment that still runs.
    `strict=True` (the command, the tests) refuses any problem, lesson references included.
    """
    stamp = tuple((p.name, p.stat().st_mtime_ns) for p in sorted(directory.glob("*.yaml")))
    if strict:
        folder = lessons_dir()
        lessons = tuple((p.name, p.stat().st_mtime_ns) for p in sorted(folder.glob("*.yaml")))
        stamp = (*stamp, str(folder), *lessons)
    experiments, problems = _cached(str(directory), stamp, strict)
    if problems and strict:
        raise CatalogError(list(problems))
    for problem in problems:
        log.warning("experiment file left out: %s", problem)
    return list(experiments)


def experiment_get(*, slug: str) -> Experiment | None:
    return next((e for e in experiments_load() if e.slug == slug), None)


def experiments_for_lesson(*, lesson: str) -> list[Experiment]:
    return [e for e in experiments_load() if lesson in e.lessons]

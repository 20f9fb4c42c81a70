"""Load and validate the experiment files; every problem comes back with file and line.

`experiments_load()` is what views and commands call; it refuses a catalog with problems so
a typo never reaches a learner as a half-working experiment.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml
from django.conf import settings

from lessons.shown_paths import display_path
from lessons.yamlread import file_data
from teachlab.lab.errors import LabInputError
from teachlab.lab.experiments import schema
from teachlab.lab.experiments.checks import BOUNDS
from teachlab.lab.experiments.metrics import RUN_METRICS, TASK_METRICS
from teachlab.lab.experiments.needs import range_problem
from teachlab.lab.experiments.source import Located, YamlError, located_load
from teachlab.lab.params import param_parse

log = logging.getLogger(__name__)
EXPERIMENTS_DIR = Path(settings.BASE_DIR) / "lessons" / "experiments"


def lessons_dir() -> Path:
    """The configured lessons folder (settings.LESSONS_DIR, TEACHLAB_LESSONS_DIR), read at each
    call so that claims resolve against the lessons the site actually serves."""
    return Path(settings.LESSONS_DIR)


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


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


def steps_seconds(steps: list) -> float:
    total = 0.0
    for step in steps:
        if isinstance(step, Mapping):
            if "wait" in step:
                total += float(step["wait"])
            elif "until" in step and isinstance(step["until"], Mapping):
                total += float(step["until"].get("within", 0))
            elif "shutdown" in step and isinstance(step["shutdown"], Mapping):
                total += float(step["shutdown"].get("grace", 0))
    return total


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
        from teachlab.lab.lanes import lanes
    except ImportError:
        return None
    return {lane.name for lane in lanes()}


# --- validation ------------------------------------------------------------------------------


class _Checker:
    def __init__(self, file: str, located: Located) -> None:
        self.file = file
        self.located = located
        self.problems: list[Problem] = []

    def problem(self, path: tuple, message: str) -> None:
        self.problems.append(Problem(self.file, self.located.line(path), message))

    def mapping(self, value: object, path: tuple, fields: dict[str, bool], what: str) -> bool:
        if not isinstance(value, Mapping):
            self.problem(path, f"{what} must be a mapping with {', '.join(fields)}")
            return False
        for name, required in fields.items():
            if required and name not in value:
                self.problem(path, f"{what} is missing `{name}`")
        for name in value:
            if name not in fields:
                self.problem(
                    (*path, name),
                    f"{what} has an unknown field `{name}` (allowed: {', '.join(fields)})",
                )
        return True

    def text(self, value: object, path: tuple, what: str) -> bool:
        if not isinstance(value, str) or not value.strip():
            self.problem(path, f"{what} must be non-empty text")
            return False
        return True

    def number(self, value: object, path: tuple, what: str, minimum: float | None = None) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.problem(path, f"{what} must be a number, not {value!r}")
            return False
        if minimum is not None and value < minimum:
            self.problem(path, f"{what} must be at least {minimum}, not {value}")
            return False
        return True

    def listing(self, value: object, path: tuple, what: str, at_least: int = 1) -> bool:
        if not isinstance(value, list) or len(value) < at_least:
            self.problem(path, f"{what} must be a list of at least {at_least}")
            return False
        return True


def _choices(c: _Checker, choices: object, path: tuple, run_names: list[str]) -> None:
    """A list of choices, each with an id, a label and the condition that makes it true."""
    if not c.listing(choices, path, "`choices`", at_least=2):
        return
    ids = []
    for i, choice in enumerate(choices):
        cpath = (*path, i)
        if not c.mapping(choice, cpath, schema.CHOICE_FIELDS, "a choice"):
            continue
        if not isinstance(choice.get("id"), str) or not re.match(schema.NAME_PATTERN, choice["id"]):
            c.problem((*cpath, "id"), "a choice `id` is lowercase letters, digits and hyphens")
        elif choice["id"] in ids:
            c.problem((*cpath, "id"), f"two choices have the id {choice['id']!r}")
        ids.append(choice.get("id"))
        if "label" in choice:
            c.text(choice["label"], (*cpath, "label"), "a choice `label`")
        if "when" in choice:
            _condition(
                c,
                choice["when"],
                (*cpath, "when"),
                schema.CONDITION_FIELDS,
                "a choice's `when`",
                run_names,
            )


def _condition(
    c: _Checker, value: object, path: tuple, fields: dict, what: str, run_names: list[str]
) -> None:
    if not c.mapping(value, path, fields, what):
        return
    per = value.get("per", "run")
    if per not in schema.PER_VALUES:
        c.problem(
            (*path, "per"), f"`per` must be one of {', '.join(schema.PER_VALUES)}, not {per!r}"
        )
        per = "run"
    metrics = TASK_METRICS if per == "task" else RUN_METRICS
    if "what" in value and value["what"] not in metrics:
        c.problem(
            (*path, "what"), f"unknown {per} metric {value['what']!r}; known: {', '.join(metrics)}"
        )
    run = value.get("run")
    if run is None and len(run_names) > 1:
        c.problem(path, f"{what} must say which `run` it reads ({', '.join(run_names)})")
    elif run is not None and run not in run_names:
        c.problem((*path, "run"), f"no run named {run!r} (runs: {', '.join(run_names)})")
    bounds = [b for b in BOUNDS if b in value]
    if len(bounds) != 1:
        c.problem(path, f"{what} needs exactly one bound of {', '.join(BOUNDS)}")
        return
    bound = value[bounds[0]]
    bpath = (*path, bounds[0])
    if isinstance(bound, Mapping):
        if c.mapping(bound, bpath, schema.BOUND_REF_FIELDS, "a bound that refers to a run"):
            if bound.get("run") not in run_names:
                c.problem((*bpath, "run"), f"no run named {bound.get('run')!r}")
            if bound.get("what") not in RUN_METRICS:
                c.problem((*bpath, "what"), f"unknown run metric {bound.get('what')!r}")
    elif bounds[0] == "between":
        if not (
            isinstance(bound, list)
            and len(bound) == 2
            and all(isinstance(b, int | float) and not isinstance(b, bool) for b in bound)
            and bound[0] <= bound[1]
        ):
            c.problem(bpath, "`between` takes [low, high], two numbers with low <= high")
    else:
        c.number(bound, bpath, f"`{bounds[0]}`")


def _steps(c: _Checker, steps: object, path: tuple, run_name: str, run_names: list[str]) -> None:
    """A step's `until` reads its own run unless it names another."""
    if not c.listing(steps, path, "`steps`"):
        return
    fired = paused = False
    for i, step in enumerate(steps):
        spath = (*path, i)
        if isinstance(step, str):
            if step not in schema.STEP_WORDS:
                c.problem(
                    spath,
                    f"unknown step {step!r}; a step is `fire` or one of {', '.join(schema.STEP_KEYS)}",
                )
            elif fired:
                c.problem(spath, "a run fires once")
            fired = True
            continue
        if not isinstance(step, Mapping) or len(step) != 1:
            c.problem(
                spath, f"a step is `fire` or a mapping with one of {', '.join(schema.STEP_KEYS)}"
            )
            continue
        ((key, value),) = step.items()
        paused = paused or key == "pause"
        if key not in schema.STEP_KEYS:
            c.problem(spath, f"unknown step {key!r}; known: fire, {', '.join(schema.STEP_KEYS)}")
        elif not fired and key not in schema.BEFORE_FIRE and not (key == "wait" and paused):
            c.problem(spath, "fire the run before any other step")
        elif key == "wait":
            c.number(value, (*spath, key), "`wait` seconds", minimum=0.1)
        elif key == "until":
            names = run_names if isinstance(value, Mapping) and "run" in value else [run_name]
            _condition(c, value, (*spath, key), schema.UNTIL_FIELDS, "`until`", names)
            if isinstance(value, Mapping) and "within" in value:
                c.number(value["within"], (*spath, key, "within"), "`within` seconds", minimum=1)
        elif key == "shutdown" and isinstance(value, Mapping):
            what = "a `shutdown` with a grace period"
            if c.mapping(value, (*spath, key), schema.STOP_FIELDS, what):
                if value.get("worker") not in schema.WORKER_TARGETS:
                    c.problem(
                        (*spath, key, "worker"),
                        f"`worker` is one of {', '.join(schema.WORKER_TARGETS)}",
                    )
                if "grace" in value:
                    c.number(value["grace"], (*spath, key, "grace"), "`grace` seconds", minimum=0)
        elif key in ("crash", "shutdown", "disconnect") and value not in schema.WORKER_TARGETS:
            c.problem(
                (*spath, key),
                f"`{key}` targets one of {', '.join(schema.WORKER_TARGETS)}, not {value!r}",
            )
        elif key == "evict" and value != "bindings":
            c.problem((*spath, key), "`evict` takes `bindings` (the lane's binding sets)")
        elif key == "pause" and value not in schema.WORKER_TARGETS:
            c.problem(
                (*spath, key),
                f"`pause` targets one of {', '.join(schema.WORKER_TARGETS)}, not {value!r}",
            )
        elif key == "resume" and value != "paused":
            c.problem((*spath, key), "`resume` takes `paused` (the workers this run paused)")
        elif key in ("fill", "free") and value != "memory":
            c.problem((*spath, key), f"`{key}` takes `memory` (the lane's Redis maxmemory)")
        elif key == "ready" and value != "workers":
            c.problem(
                (*spath, key), "`ready` takes `workers` (wait until the lane's workers are alive)"
            )
    if not fired:
        c.problem(path, "the steps never `fire` the run")
    keys = [next(iter(step)) for step in steps if isinstance(step, Mapping) and len(step) == 1]
    if "fill" in keys and "free" not in keys[keys.index("fill") :]:
        c.problem(path, "a run that fills the broker's memory must `free: memory` after it")
    if "pause" in keys and "resume" not in keys[keys.index("pause") :]:
        c.problem(path, "a run that pauses a worker must `resume: paused` after it")


def experiment_validate(
    *,
    file: str,
    text: str,
    lessons: dict[str, set[str]] | None = None,
    lanes: set[str] | None = None,
) -> tuple[Experiment | None, list[Problem]]:
    """Check one experiment file; returns the experiment when it has no problems."""
    try:
        located = located_load(text)
    except YamlError as exc:
        return None, [Problem(file, exc.line, str(exc))]
    c = _Checker(file, located)
    for path, line in located.duplicates:
        c.problems.append(Problem(file, line, f"`{path[-1]}` appears twice in the same mapping"))
    data = located.data
    if not c.mapping(data, (), schema.FIELDS, "an experiment"):
        return None, c.problems

    slug = data.get("slug")
    if not isinstance(slug, str) or not re.match(schema.SLUG_PATTERN, slug):
        c.problem(("slug",), "`slug` must be lowercase letters, digits and hyphens")
    elif Path(file).stem != slug:
        c.problem(("slug",), f"`slug` {slug!r} must match the file name ({Path(file).stem}.yaml)")
    if "order" in data and (isinstance(data["order"], bool) or not isinstance(data["order"], int)):
        c.problem(("order",), "`order` must be a whole number")
    for name in ("title", "question", "explanation"):
        if name in data:
            c.text(data[name], (name,), f"`{name}`")

    # the runs first: checks and prediction refer to them by name
    runs = data.get("runs")
    run_names: list[str] = []
    if "runs" in data and c.listing(runs, ("runs",), "`runs`"):
        run_names = [
            r.get("name") for r in runs if isinstance(r, Mapping) and isinstance(r.get("name"), str)
        ]
        for i, run in enumerate(runs):
            rpath = ("runs", i)
            if not c.mapping(run, rpath, schema.RUN_FIELDS, "a run"):
                continue
            name = run.get("name")
            if not isinstance(name, str) or not re.match(schema.NAME_PATTERN, name):
                c.problem((*rpath, "name"), "a run `name` is lowercase letters, digits and hyphens")
            elif run_names.count(name) > 1:
                c.problem((*rpath, "name"), f"two runs are named {name!r}")
            lane = run.get("lane")
            if not isinstance(lane, str):
                c.problem((*rpath, "lane"), "`lane` must name a lab lane")
            elif lanes is not None and lane not in lanes:
                c.problem(
                    (*rpath, "lane"),
                    f"no lane {lane!r} in the lab (lanes: {', '.join(sorted(lanes))})",
                )
            if "after" in run and run["after"] not in run_names[:i]:
                c.problem(
                    (*rpath, "after"), f"`after` must name an earlier run, not {run['after']!r}"
                )
            if "feeder" in run and not isinstance(run["feeder"], bool):
                c.problem((*rpath, "feeder"), "`feeder` is true or false")
            params = run.get("params")
            if isinstance(params, Mapping):
                for key, value in params.items():
                    ppath = (*rpath, "params", key)
                    if key not in schema.PARAMS:
                        c.problem(
                            ppath,
                            f"unknown run parameter `{key}` (known: {', '.join(schema.PARAMS)})",
                        )
                    elif isinstance(value, bool) != (
                        bool in schema.PARAMS[key].types
                    ) or not isinstance(value, schema.PARAMS[key].types):
                        types = schema.PARAMS[key].types
                        c.problem(
                            ppath,
                            f"`{key}` must be {' or '.join(t.__name__ for t in types)}, not {value!r}",
                        )
                    else:
                        try:
                            param_parse(key, value)
                        except LabInputError as exc:
                            c.problem(ppath, str(exc))
            elif "params" in run:
                c.problem((*rpath, "params"), "`params` must be a mapping of run parameters")
            if "steps" in run:
                _steps(
                    c,
                    run["steps"],
                    (*rpath, "steps"),
                    name if isinstance(name, str) else "",
                    run_names,
                )
                if (
                    isinstance(run["steps"], list)
                    and steps_seconds(run["steps"]) > schema.MAX_SECONDS
                ):
                    c.problem(
                        (*rpath, "steps"),
                        f"the steps take {steps_seconds(run['steps']):.0f} s; keep a run under {schema.MAX_SECONDS} s so CI runs them all",
                    )

    backs = data.get("backs")
    if "backs" in data and c.listing(backs, ("backs",), "`backs`"):
        for i, back in enumerate(backs):
            bpath = ("backs", i)
            if not c.mapping(back, bpath, schema.BACKS_FIELDS, "a `backs` entry"):
                continue
            lesson = back.get("lesson")
            claims = back.get("claims")
            if not isinstance(claims, list) or not all(isinstance(x, str) for x in claims):
                c.problem(
                    (*bpath, "claims"),
                    "`claims` must be a list of claim ids ([] when it shows the lesson as a whole)",
                )
                claims = []
            if lessons is None or not isinstance(lesson, str):
                continue
            if lesson not in lessons:
                c.problem(
                    (*bpath, "lesson"),
                    f"no lesson with slug {lesson!r} in {display_path(lessons_dir())}",
                )
                continue
            for j, claim in enumerate(claims):
                if claim not in lessons[lesson]:
                    c.problem((*bpath, "claims", j), f"lesson {lesson!r} has no claim {claim!r}")

    prediction = data.get("prediction")
    if "prediction" in data and c.mapping(
        prediction, ("prediction",), schema.PREDICTION_FIELDS, "`prediction`"
    ):
        ppath = ("prediction",)
        if "prompt" in prediction:
            c.text(prediction["prompt"], (*ppath, "prompt"), "the prediction `prompt`")
        kind = prediction.get("kind")
        if kind not in schema.PREDICTION_KINDS:
            c.problem(
                (*ppath, "kind"), f"`kind` must be one of {', '.join(schema.PREDICTION_KINDS)}"
            )
        elif kind == "number":
            observe = prediction.get("observe")
            if observe is None:
                c.problem(
                    ppath,
                    "a number prediction needs `observe`: {run, what} naming the run metric to compare",
                )
            elif c.mapping(observe, (*ppath, "observe"), {"run": False, "what": True}, "`observe`"):
                if observe.get("what") not in RUN_METRICS:
                    c.problem(
                        (*ppath, "observe", "what"), f"unknown run metric {observe.get('what')!r}"
                    )
                if observe.get("run") is None and len(run_names) > 1:
                    c.problem((*ppath, "observe"), "`observe` must say which `run`")
                elif observe.get("run") is not None and observe["run"] not in run_names:
                    c.problem((*ppath, "observe", "run"), f"no run named {observe['run']!r}")
            if "choices" in prediction:
                c.problem((*ppath, "choices"), "a number prediction has no `choices`")
        else:
            _choices(c, prediction.get("choices"), (*ppath, "choices"), run_names)
            if "observe" in prediction:
                c.problem(
                    (*ppath, "observe"),
                    "a choice prediction is matched by each choice's `when`, not `observe`",
                )

        timing = prediction.get("timing")
        tpath = (*ppath, "timing")
        if "timing" in prediction and c.mapping(
            timing, tpath, schema.TIMING_FIELDS, "the timing prediction"
        ):
            if "prompt" in timing:
                c.text(timing["prompt"], (*tpath, "prompt"), "the timing `prompt`")
            _choices(c, timing.get("choices"), (*tpath, "choices"), run_names)

    checks = data.get("checks")
    if "checks" in data and c.listing(checks, ("checks",), "`checks`"):
        ids: set[str] = set()
        for i, check in enumerate(checks):
            _condition(c, check, ("checks", i), schema.CHECK_FIELDS, "a check", run_names)
            for name in schema.CHECK_ON:
                if isinstance(check, Mapping) and name in check:
                    problem = range_problem(check[name])
                    if problem:
                        c.problem(("checks", i, name), f"`{name}` {problem}")
            if isinstance(check, Mapping) and "says" in check:
                c.text(check["says"], ("checks", i, "says"), "a check's `says`")
            if isinstance(check, Mapping) and "id" in check:
                check_id = check["id"]
                if not isinstance(check_id, str) or not re.match(schema.NAME_PATTERN, check_id):
                    c.problem(
                        ("checks", i, "id"),
                        "a check's `id` is lowercase letters, digits and dashes, like "
                        "`body-ran-once`",
                    )
                elif check_id in ids:
                    c.problem(("checks", i, "id"), f"two checks have the id {check_id!r}")
                ids.add(check_id)

    links = data.get("links")
    if "links" in data and c.listing(links, ("links",), "`links`", at_least=0):
        for i, link in enumerate(links):
            lpath = ("links", i)
            if not c.mapping(link, lpath, schema.LINK_FIELDS, "a link"):
                continue
            if link.get("tier") not in schema.TIERS:
                c.problem((*lpath, "tier"), f"`tier` must be one of {', '.join(schema.TIERS)}")
            if lessons is not None and link.get("lesson") not in lessons:
                c.problem((*lpath, "lesson"), f"no lesson with slug {link.get('lesson')!r}")

    if "needs" in data:
        _needs(c, data["needs"])
    if "workers_may_exit" in data:
        c.text(data["workers_may_exit"], ("workers_may_exit",), "`workers_may_exit`")

    if c.problems:
        return None, c.problems
    return _experiment(data, file, run_names), []


def _needs(c: _Checker, needs: object) -> None:
    """`needs: {kombu: ">=5.7", why: ...}`: at least one range, each well formed, and why."""
    if not c.mapping(needs, ("needs",), schema.NEEDS_FIELDS, "`needs`"):
        return
    if "why" in needs:
        c.text(needs["why"], ("needs", "why"), "`needs.why`")
    named = [name for name in schema.NEEDS_PACKAGES if name in needs]
    if not named:
        c.problem(("needs",), f"`needs` names none of {', '.join(schema.NEEDS_PACKAGES)}")
    for name in named:
        problem = range_problem(needs[name])
        if problem:
            c.problem(("needs", name), f"`needs.{name}` {problem}")


def _experiment(data: dict, file: str, run_names: list[str]) -> Experiment:
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

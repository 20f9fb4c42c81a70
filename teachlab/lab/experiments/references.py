"""What an experiment file names outside one field: its other runs, the lab's lanes and
metrics, the lessons and their claims, its own file name. Plain functions, run once the file
has passed its schema (schema.py), on the plain data; each returns (loc, message) pairs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from lessons.shown_paths import display_path
from lessons.yamlschema import Loc
from teachlab.lab.experiments.checks import BOUNDS
from teachlab.lab.experiments.metrics import RUN_METRICS, TASK_METRICS
from teachlab.lab.experiments.schema_words import Found


def _bound_found(bound: Mapping, at: Loc, run_names: list[str]) -> Found:
    found: Found = []
    if bound.get("run") not in run_names:
        found.append(((*at, "run"), f"no run named {bound.get('run')!r}"))
    if bound.get("what") not in RUN_METRICS:
        found.append(((*at, "what"), f"unknown run metric {bound.get('what')!r}"))
    return found


def condition_found(condition: Mapping, at: Loc, what: str, run_names: list[str]) -> Found:
    """The metric exists for its `per`, the run it reads exists (and is named when the
    experiment has several), and so do those a bound refers to."""
    found: Found = []
    per = condition.get("per", "run")
    metrics = TASK_METRICS if per == "task" else RUN_METRICS
    if condition["what"] not in metrics:
        known = ", ".join(metrics)
        message = f"unknown {per} metric {condition['what']!r}; known: {known}"
        found.append(((*at, "what"), message))
    run = condition.get("run")
    names = ", ".join(run_names)
    if run is None and len(run_names) > 1:
        found.append((at, f"{what} must say which `run` it reads ({names})"))
    elif run is not None and run not in run_names:
        found.append(((*at, "run"), f"no run named {run!r} (runs: {names})"))
    for name in BOUNDS:
        if isinstance(condition.get(name), Mapping):
            found += _bound_found(condition[name], (*at, name), run_names)
    return found


def _unique(items: list[Mapping], at: Loc, noun: str) -> Found:
    """Two items with one `id` ("two checks have the id 'x'")."""
    found: Found = []
    seen = set()
    for i, item in enumerate(items):
        if "id" not in item:
            continue
        if item["id"] in seen:
            found.append(((*at, i, "id"), f"two {noun} have the id {item['id']!r}"))
        seen.add(item["id"])
    return found


def _choices_found(choices: list[Mapping], at: Loc, run_names: list[str]) -> Found:
    found = _unique(choices, at, "choices")
    for i, choice in enumerate(choices):
        found += condition_found(choice["when"], (*at, i, "when"), "a choice's `when`", run_names)
    return found


def _observe_found(observe: Mapping, run_names: list[str]) -> Found:
    at = ("prediction", "observe")
    found: Found = []
    if observe.get("what") not in RUN_METRICS:
        found.append(((*at, "what"), f"unknown run metric {observe.get('what')!r}"))
    if observe.get("run") is None and len(run_names) > 1:
        found.append((at, "`observe` must say which `run`"))
    elif observe.get("run") is not None and observe["run"] not in run_names:
        found.append(((*at, "run"), f"no run named {observe['run']!r}"))
    return found


def prediction_found(prediction: Mapping, run_names: list[str]) -> Found:
    if prediction["kind"] == "number":
        found = _observe_found(prediction["observe"], run_names)
    else:
        found = _choices_found(prediction["choices"], ("prediction", "choices"), run_names)
    if prediction.get("timing"):
        at = ("prediction", "timing", "choices")
        found += _choices_found(prediction["timing"]["choices"], at, run_names)
    return found


def runs_found(runs: list[Mapping], lanes: set[str] | None) -> Found:
    """Run names once each, lanes the lab has, `after` an earlier run, `until`s that read
    a run there is (their own unless they name another)."""
    names = [run["name"] for run in runs]
    found: Found = []
    for i, run in enumerate(runs):
        at = ("runs", i)
        if names.count(run["name"]) > 1:
            found.append(((*at, "name"), f"two runs are named {run['name']!r}"))
        if lanes is not None and run["lane"] not in lanes:
            known = ", ".join(sorted(lanes))
            found.append(((*at, "lane"), f"no lane {run['lane']!r} in the lab (lanes: {known})"))
        if "after" in run and run["after"] not in names[:i]:
            message = f"`after` must name an earlier run, not {run['after']!r}"
            found.append(((*at, "after"), message))
        for j, step in enumerate(run["steps"]):
            if isinstance(step, Mapping) and "until" in step:
                until = step["until"]
                reads = names if "run" in until else [run["name"]]
                found += condition_found(until, (*at, "steps", j, "until"), "`until`", reads)
    return found


def lessons_found(data: Mapping, lessons: dict[str, set[str]], lessons_dir: Path) -> Found:
    """Backed lessons and claims exist; so do the lessons linked."""
    found: Found = []
    for i, back in enumerate(data["backs"]):
        at = ("backs", i)
        lesson = back["lesson"]
        if lesson not in lessons:
            shown = display_path(lessons_dir)
            found.append(((*at, "lesson"), f"no lesson with slug {lesson!r} in {shown}"))
            continue
        for j, claim in enumerate(back["claims"]):
            if claim not in lessons[lesson]:
                message = f"lesson {lesson!r} has no claim {claim!r}"
                found.append(((*at, "claims", j), message))
    for i, link in enumerate(data.get("links") or []):
        if link["lesson"] not in lessons:
            found.append((("links", i, "lesson"), f"no lesson with slug {link['lesson']!r}"))
    return found


def references_found(
    data: Mapping,
    *,
    file: str,
    lessons: dict[str, set[str]] | None,
    lessons_dir: Path,
    lanes: set[str] | None,
) -> Found:
    """Every reference the file makes that does not hold. `lessons` and `lanes` None: not
    checked (the pages' lenient load, a lab table that is not importable)."""
    found: Found = []
    stem = Path(file).stem
    if data["slug"] != stem:
        message = f"`slug` {data['slug']!r} must match the file name ({stem}.yaml)"
        found.append((("slug",), message))
    run_names = [run["name"] for run in data["runs"]]
    found += runs_found(data["runs"], lanes)
    if lessons is not None:
        found += lessons_found(data, lessons, lessons_dir)
    found += prediction_found(data["prediction"], run_names)
    found += _unique(data["checks"], ("checks",), "checks")
    for i, check in enumerate(data["checks"]):
        found += condition_found(check, ("checks", i), "a check", run_names)
    return found

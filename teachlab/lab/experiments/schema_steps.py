"""A run's steps: a small language read in order (fire once, nothing but `ready`, `pause` and
a `wait` after a pause before it; what fills must free, what pauses must resume), so they are
checked by one walk over the list rather than item by item.

Steps: the bare word `fire`, or a one-key mapping:
  wait: S             sleep S seconds
  until: {condition, within: S}   poll until the condition holds (or S pass); it reads its
                      own run unless it names another `run` of the experiment
  crash: holder|any   SIGKILL the worker that holds the run's task (or any of the lane's)
  shutdown: holder|any  warm shutdown (SIGTERM) of that worker
  shutdown: {worker: holder|any, grace: S}  a supervisor's stop: SIGTERM, then SIGKILL
                      when the worker is still there after S seconds
  disconnect: holder|any  the broker closes that worker's connections (Redis lanes),
                      as a network cut or a broker restart would; the worker stays up
  evict: bindings     delete the lane's binding sets (`_kombu.binding.*`), as an eviction
                      policy could; a restart of the worker declares them again
  pause: holder|any   freeze that worker (SIGSTOP), as a long stall would; allowed before
                      fire, and so is a `wait` after it (to let the worker's BRPOP run out)
  resume: paused      let the workers this run paused go on (SIGCONT)
  fill: memory        write filler values until the lane's Redis stands past its maxmemory
                      (a lane on a server of its own, set to noeviction)
  free: memory        delete the filler values; a run that fills must free
  ready: workers      wait until every worker of the lane is alive again (allowed before fire)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from teachlab.lab.experiments.schema_conditions import UntilModel
from teachlab.lab.experiments.schema_words import (
    ExperimentPart,
    Found,
    number,
    number_problem,
    one_of,
    part_found,
)

# An experiment must stay short enough that all of them run in CI in about ten minutes.
MAX_SECONDS = 150
STEP_WORDS = ("fire",)
STEP_KEYS = (
    "wait",
    "until",
    "crash",
    "shutdown",
    "disconnect",
    "evict",
    "pause",
    "resume",
    "fill",
    "free",
    "ready",
)
BEFORE_FIRE = ("ready", "pause")  # and a `wait` once a worker is paused
WORKER_TARGETS = ("holder", "any")
TARGETS = ", ".join(WORKER_TARGETS)
# step -> the one word it takes, and what the author reads otherwise
STEP_WORD = {
    "evict": ("bindings", "`evict` takes `bindings` (the lane's binding sets)"),
    "resume": ("paused", "`resume` takes `paused` (the workers this run paused)"),
    "fill": ("memory", "`fill` takes `memory` (the lane's Redis maxmemory)"),
    "free": ("memory", "`free` takes `memory` (the lane's Redis maxmemory)"),
    "ready": ("workers", "`ready` takes `workers` (wait until the lane's workers are alive)"),
}


class StopModel(ExperimentPart):
    yaml_what: ClassVar[str] = "a `shutdown` with a grace period"
    worker: one_of(WORKER_TARGETS, f"`worker` is one of {TARGETS}")
    grace: number("`grace` seconds", minimum=0)


def steps_seconds(steps: list) -> float:
    """How long the steps wait at most: waits, `until`s' `within` and shutdowns' grace."""
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


def _step_value(key: str, value: Any) -> Found:
    """What is wrong with one step's value, below the step's key."""
    if key == "wait":
        problem = number_problem(value, "`wait` seconds", minimum=0.1)
        return [((key,), problem)] if problem else []
    if key == "until":
        return part_found(UntilModel, value, (key,))
    if key == "shutdown" and isinstance(value, Mapping):
        return part_found(StopModel, value, (key,))
    if key in ("crash", "shutdown", "disconnect", "pause") and value not in WORKER_TARGETS:
        return [((key,), f"`{key}` targets one of {TARGETS}, not {value!r}")]
    if key in STEP_WORD and value != STEP_WORD[key][0]:
        return [((key,), STEP_WORD[key][1])]
    return []


def _sequence_found(steps: list, fired: bool) -> Found:
    found: Found = []
    if not fired:
        found.append(((), "the steps never `fire` the run"))
    keys = [next(iter(step)) for step in steps if isinstance(step, Mapping) and len(step) == 1]
    if "fill" in keys and "free" not in keys[keys.index("fill") :]:
        found.append(((), "a run that fills the broker's memory must `free: memory` after it"))
    if "pause" in keys and "resume" not in keys[keys.index("pause") :]:
        found.append(((), "a run that pauses a worker must `resume: paused` after it"))
    return found


def steps_found(steps: list) -> Found:
    """Every problem of a run's steps, at (index, …) below the list."""
    found: Found = []
    fired = paused = False
    for i, step in enumerate(steps):
        if isinstance(step, str):
            if step not in STEP_WORDS:
                keys = ", ".join(STEP_KEYS)
                found.append(((i,), f"unknown step {step!r}; a step is `fire` or one of {keys}"))
            elif fired:
                found.append(((i,), "a run fires once"))
            fired = True
            continue
        if not isinstance(step, Mapping) or len(step) != 1:
            found.append(
                ((i,), f"a step is `fire` or a mapping with one of {', '.join(STEP_KEYS)}")
            )
            continue
        ((key, value),) = step.items()
        paused = paused or key == "pause"
        if key not in STEP_KEYS:
            found.append(((i,), f"unknown step {key!r}; known: fire, {', '.join(STEP_KEYS)}"))
        elif not fired and key not in BEFORE_FIRE and not (key == "wait" and paused):
            found.append(((i,), "fire the run before any other step"))
        else:
            found += [((i, *loc), message) for loc, message in _step_value(key, value)]
    found += _sequence_found(steps, fired)
    # only once every value is a number: the sum reads them all
    if not found and steps_seconds(steps) > MAX_SECONDS:
        seconds = f"{steps_seconds(steps):.0f} s"
        found.append(
            ((), f"the steps take {seconds}; keep a run under {MAX_SECONDS} s so CI runs them all")
        )
    return found

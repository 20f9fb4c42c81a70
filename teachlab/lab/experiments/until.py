"""An `until` step: poll a run's events until a condition holds, and say so in words."""

from __future__ import annotations

import time

from teachlab.core.dbthreads import connection_release
from teachlab.lab.experiments.checks import check_evaluate
from teachlab.lab.experiments.metrics import RUN_METRICS
from teachlab.lab.experiments.observe import observation_for_run
from teachlab.lab.experiments.playing import ExperimentRun

POLL = 0.3  # seconds between looks at a run's events while waiting `until`

# What an `until` waits for, in words: metric -> (words for the run, words for every task).
UNTIL_WORDS = {
    "executions": ("the body has run {n}", "every task's body has run {n}"),
    "completions": ("the body has finished {n}", "every task's body has finished {n}"),
    "receipts": ("workers have received a task {n}", "workers have received every task {n}"),
    "revoked": ("a worker has revoked a copy {n}", "every task has been revoked {n}"),
    "suppressed": ("the guard has turned a copy away {n}", "the guard turned every task away {n}"),
    "failures": ("a run has ended in failure {n}", "every task has ended in failure {n}"),
    "worker_lost": (
        "the parent has recorded a dead pool child {n}",
        "the parent has recorded a dead pool child for every task {n}",
    ),
    "min_executions": ("every task's body has run {n}", "every task's body has run {n}"),
}


def metric_label(name: str) -> str:
    return RUN_METRICS[name][1] if name in RUN_METRICS else name


def _times(n: float) -> str:
    n = int(n) if float(n).is_integer() else n
    return {1: "once", 2: "twice"}.get(n, f"{n:g} times")


def until_text(condition: dict, *, own_run: str) -> str:
    """An `until` step as a learner reads it: "Watching until the body has run at least
    twice (up to 32 s)", not the file's metric names."""
    what, within = condition.get("what", ""), condition.get("within", 0)
    words = UNTIL_WORDS.get(what)
    if words is None or "at_least" not in condition:
        phrase = f"{metric_label(what)} is reached"
    else:
        n = float(condition["at_least"])
        template = words[1] if condition.get("per") == "task" else words[0]
        phrase = template.format(n=("at least " if n > 1 else "") + _times(n))
    whose = condition.get("run")
    if whose and whose != own_run:
        phrase += f" in run “{whose}”"
    return f"Watching until {phrase} (up to {float(within):g} s)"


def _condition_met(*, states: dict[str, ExperimentRun], condition: dict) -> bool:
    """An `until` reads its own run or, when it names one, another run of the experiment."""
    watched = states[condition["run"]].run
    if watched is None:  # that run has not fired yet
        return False
    spec = {k: v for k, v in condition.items() if k != "within"}
    observation = observation_for_run(run=watched)
    return check_evaluate(check=spec, observations={condition["run"]: observation}).passed


def until_wait(*, states: dict[str, ExperimentRun], condition: dict) -> bool:
    """True when the condition held within its `within` seconds."""
    deadline = time.monotonic() + float(condition["within"])
    while time.monotonic() < deadline:
        if _condition_met(states=states, condition=condition):
            return True
        connection_release()
        time.sleep(POLL)
    return _condition_met(states=states, condition=condition)

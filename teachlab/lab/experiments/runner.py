"""Run an experiment's steps against the real lanes, then judge the runs by its checks.

The jobs worker (one attempt, queued by the experiment page) and `lab experiment`
(headless, possibly several at once) both call `experiment_execute`. Runs of one experiment
go side by side in threads unless a run waits `after` another (steps.py plays each); a crash
or warm shutdown goes to the worker that holds the run's task at that moment, as the lab's
registry reports it (targets.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from django.db import close_old_connections

from teachlab.core.dbthreads import connection_release
from teachlab.lab.eventlog.settle import run_settle
from teachlab.lab.experiments.catalog import Experiment
from teachlab.lab.experiments.charts import (
    MANY_TASKS,
    bucket_seconds,
    copies_histogram,
    receipts_over_time,
)
from teachlab.lab.experiments.check_versions import check_applies, run_check_versions
from teachlab.lab.experiments.checks import check_evaluate
from teachlab.lab.experiments.leftover import run_messages_left
from teachlab.lab.experiments.metrics import Observation, run_metric
from teachlab.lab.experiments.observe import observation_for_run
from teachlab.lab.experiments.playing import ExperimentRun, Progress
from teachlab.lab.experiments.prediction import choice_verdict, prediction_verdict
from teachlab.lab.experiments.steps import run_steps
from teachlab.lab.models import Run
from teachlab.lab.runs.run_versions import run_versions_fill
from teachlab.lab.worker.versions import versions_text

SUMMARY_METRICS = (
    "tasks",
    "receipts",
    "redelivered",
    "executions",
    "completions",
    "suppressed",
    "revoked",
    "retries",
    "duplicates",
    "amplification",
    "max_receipts",
    "max_running_at_once",
)


def run_report(*, observation: Observation) -> dict:
    report = {name: run_metric(observation=observation, what=name) for name in SUMMARY_METRICS}
    if len(observation.tasks) >= MANY_TASKS:  # runs this big get the histogram and the plot
        report["histogram"] = copies_histogram(observation=observation)
        bucket = bucket_seconds(observation)
        report["receipts_over_time"] = receipts_over_time(observation=observation, bucket=bucket)
        report["bucket"] = bucket
    return report


def _runs_play(
    *, experiment: Experiment, learner, started: float, progress, on_fired
) -> dict[str, ExperimentRun]:
    """Every run's steps, each in a thread of its own; returns when all are done."""
    several = len(experiment.runs) > 1
    states = {
        spec["name"]: ExperimentRun(
            spec=spec,
            label=f"Run “{spec['name']}”: " if several else "",
            started=started,
            progress=progress,
        )
        for spec in experiment.runs
    }
    threads = []
    for spec in experiment.runs:
        thread = threading.Thread(
            target=run_steps,
            kwargs={
                "state": states[spec["name"]],
                "slug": experiment.slug,
                "learner": learner,
                "on_fired": on_fired,
                "waits_for": states.get(spec.get("after") or ""),
                "states": states,
            },
            name=f"experiment-{experiment.slug}-{spec['name']}",
            daemon=True,
        )
        thread.start()
        threads.append(thread)
    connection_release()  # the runs' threads query while this one waits for them
    for thread in threads:
        thread.join()
    close_old_connections()
    return states


def _run_observed(state: ExperimentRun) -> tuple[Observation, dict]:
    """The settled run's observation, and its entry in the verdict's `runs`."""
    run = state.run
    run.refresh_from_db()
    run_settle(run)
    run_versions_fill(run)
    observation = observation_for_run(run=run, duration=time.time() - run.fired_at)
    observation.messages_left = run_messages_left(run=run)
    observation.broker = state.broker
    return observation, {
        "id": run.id,
        "lane": run.lane,
        "params": state.spec["params"],
        "feeder": bool(state.spec.get("feeder")),
        "steps": state.log,
        "report": run_report(observation=observation),
        "versions": run.versions,
        "versions_text": versions_text(run.versions),
    }


def _judged(
    *, experiment: Experiment, observations: dict, runs: dict, prediction, timing
) -> tuple[list[dict], dict]:
    """The checks that apply to the runs' versions, and the prediction beside the outcome."""
    versions = {name: run_check_versions(run) for name, run in runs.items()}
    checks = [
        check_evaluate(check=check, observations=observations).as_dict()
        for check in experiment.checks
        if check_applies(check=check, versions=versions)
    ]
    verdict = prediction_verdict(experiment=experiment, observations=observations, value=prediction)
    if experiment.prediction.get("timing"):
        verdict["timing"] = choice_verdict(
            prompt=experiment.prediction["timing"]["prompt"],
            choices=experiment.prediction["timing"]["choices"],
            observations=observations,
            value=timing,
        )
    return checks, verdict


def experiment_execute(
    *,
    experiment: Experiment,
    learner,
    prediction=None,
    progress: Progress | None = None,
    on_fired: Callable[[str, Run], None] | None = None,
    timing=None,
) -> dict:
    """Carry out every run's steps, then evaluate the checks; returns the verdict as a dict."""
    started = time.time()
    states = _runs_play(
        experiment=experiment,
        learner=learner,
        started=started,
        progress=progress,
        on_fired=on_fired,
    )
    errors = [f"{name}: {e}" for name, s in states.items() for e in s.errors]
    observations: dict[str, Observation] = {}
    runs: dict[str, dict] = {}
    for name, state in states.items():
        if state.run is not None:
            observations[name], runs[name] = _run_observed(state)
    checks: list[dict] = []
    verdict = {"kind": experiment.prediction["kind"], "value": prediction, "observed": None}
    if len(observations) == len(states):
        checks, verdict = _judged(
            experiment=experiment,
            observations=observations,
            runs=runs,
            prediction=prediction,
            timing=timing,
        )
    return {
        "slug": experiment.slug,
        "title": experiment.title,
        "passed": bool(checks) and all(c["passed"] for c in checks) and not errors,
        "checks": checks,
        "errors": errors,
        "runs": runs,
        "prediction": verdict,
        # lane -> what its workers ran on when the run fired (issue 25, "version honesty")
        "versions": {run["lane"]: run["versions"] for run in runs.values()},
        "seconds": round(time.time() - started, 1),
    }

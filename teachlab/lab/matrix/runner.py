"""Run experiments on each Celery × Redis combination: the combination's workers (its own
virtualenv) on a private Redis of that version, the recorder and the runner on the project's
own versions. A combination that cannot start says why in its records; the rest go on.

The matrix keeps its worker registry and event streams in an app database of its own
(settings.LAB_MATRIX_DB_APP), so workers of a running dev stack or of a test session on the
same Redis are never taken for the combination's.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.test import override_settings

from teachlab.lab.experiments.catalog import Experiment
from teachlab.lab.experiments.needs import needs_unmet
from teachlab.lab.matrix.envs import EnvFailed, env_build, lock_pins, matrix_dir
from teachlab.lab.matrix.processes import (
    READY_WITHIN,
    WorkersFailed,
    child_env,
    lane_workers,
    own_reason,
    recorder,
    workers_ready,
)
from teachlab.lab.matrix.records import current_commit, experiment_digest
from teachlab.lab.matrix.servers import PrivateRedis
from teachlab.lab.runs.lanes import lane_get
from teachlab.lab.runs.lanetable import NOEVICTION_SERVER_ARGS

START_COST = 15.0  # seconds a combination takes to start, for the estimate

Say = Callable[[str], None]


@dataclass
class Combination:
    celery: str
    redis: str

    @property
    def label(self) -> str:
        return f"Celery {self.celery} × Redis {self.redis}"


def record_for(
    *,
    experiment: Experiment,
    combination: Combination,
    verdict: str,
    reason: str = "",
    result: dict | None = None,
    broker: str = "",
    seconds: float = 0.0,
    pinned: dict | None = None,
) -> dict:
    """`pinned`: the lock file's versions, for a combination skipped without workers."""
    result = result or {}
    workers = result.get("versions") or {}
    first = next(iter(workers.values()), {}) if workers else {}
    versions = {k: v for k, v in first.items() if k != "redis"} or dict(pinned or {})
    if broker or first.get("redis"):
        versions["redis"] = first.get("redis") or broker
    return {
        "experiment": experiment.slug,
        "combination": {"celery": combination.celery, "redis": combination.redis},
        "versions": versions,  # as the workers and the broker reported them
        "broker_info": {"redis": broker} if broker else {},
        "workers": workers,
        "verdict": verdict,
        "reason": reason,
        "checks": [
            {k: c[k] for k in ("run", "says", "passed", "expected", "observed")}
            for c in result.get("checks") or []
        ],
        "errors": list(result.get("errors") or []),
        "seconds": seconds,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": current_commit(),
        "digest": experiment_digest(experiment.slug),
    }


RABBIT_ONLY = "runs on RabbitMQ; the matrix varies the Redis broker only"
PINNED_SHOWN = ("celery", "kombu", "redis")  # redis-py, recorded as "redis-py"


def skip_reason(experiment: Experiment, *, on_redis: bool, pins: dict[str, str]) -> str:
    """Why the combination whose lock pins these versions does not run the experiment ("" when
    it does): a RabbitMQ experiment, or one whose `needs` the pinned releases do not meet."""
    if not on_redis:
        return RABBIT_ONLY
    return needs_unmet(experiment.needs, pins)


def pinned_versions(series: str) -> dict[str, str]:
    """The lock file's Celery, kombu and redis-py, as a skipped record's versions."""
    pins = lock_pins(series)
    names = {"redis": "redis-py"}
    return {names.get(k, k): pins[k] for k in PINNED_SHOWN if k in pins}


def version_mismatch(series: str, reported: dict) -> str:
    """Why the workers are not the pair asked for ("" when they are)."""
    pins = lock_pins(series)
    wrong = [
        f"{name} {got.get(name)} (lock: {pins[name]})"
        for got in reported.values()
        for name in ("celery", "kombu")
        if got.get(name) != pins.get(name)
    ]
    return "workers reported " + ", ".join(wrong) if wrong else ""


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


@contextmanager
def one_matrix_at_a_time():
    """Two matrix runs would build one virtualenv at once and see each other's workers in
    the registry (same lane names): the second one is refused."""
    matrix_dir().mkdir(parents=True, exist_ok=True)
    with open(matrix_dir() / "run.lock", "a+") as held:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held.seek(0)
            raise EnvFailed(
                f"another `lab matrix` is running (pid {held.read().strip()})"
            ) from None
        held.seek(0)
        held.truncate()
        held.write(str(os.getpid()))
        held.flush()
        yield


def matrix_run(
    *,
    combinations: list[Combination],
    experiments: list[Experiment],
    learner,
    say: Say,
    on_record: Callable[[dict], None] = lambda record: None,
) -> list[dict]:
    """Every experiment on every combination; one record each, in order."""
    began = time.monotonic()
    redis_lanes = {e.slug: all(lane_get(n).is_redis for n in e.lanes) for e in experiments}
    per_combination = START_COST + sum(e.seconds for e in experiments if redis_lanes[e.slug])
    records: list[dict] = []
    logs = matrix_dir() / "logs"
    with one_matrix_at_a_time(), override_settings(REDIS_DB_APP=settings.LAB_MATRIX_DB_APP):
        stack = recorder(logs)
        try:
            for index, combination in enumerate(combinations):
                left_after = per_combination * (len(combinations) - index - 1)
                found = _combination_run(
                    combination=combination,
                    experiments=experiments,
                    redis_lanes=redis_lanes,
                    learner=learner,
                    execute=experiments_execute,
                    logs=logs,
                    say=lambda text, i=index, label=combination.label: say(
                        f"[{i + 1}/{len(combinations)} {label}] {text}  "
                        f"({_clock(time.monotonic() - began)} elapsed)"
                    ),
                    estimate=lambda seconds, after=left_after: _clock(
                        per_combination + after - seconds
                    ),
                )
                for record in found:
                    on_record(record)
                records.extend(found)
        finally:
            stack.stop()
    return records


def experiments_execute(experiments: list[Experiment], learner, say: Say) -> list[dict]:
    """The combination's experiments, overlapping those on separate broker databases as
    `lab experiment --all` does."""
    from teachlab.lab.experiments.batch import experiments_run_many
    from teachlab.lab.experiments.runner import experiment_execute

    if len(experiments) == 1:
        slug = experiments[0].slug
        progress = lambda text: say(f"{slug}: {text}")  # noqa: E731
        return [experiment_execute(experiment=experiments[0], learner=learner, progress=progress)]
    return experiments_run_many(
        experiments=experiments,
        learner=learner,
        on_progress=lambda slug, text: say(f"{slug}: {text}"),
    )


def _combination_run(
    *, combination, experiments, redis_lanes, learner, execute, logs, say, estimate
) -> list[dict]:
    """One combination's records: those it skips, then the rest run on its Redis and workers."""
    started = time.monotonic()
    records, runnable = _skipped(combination, experiments, redis_lanes, say)
    if not runnable:
        return records
    broker, workers = PrivateRedis(combination.redis), None
    lanes = sorted({lane for e in runnable for lane in e.lanes})
    tight = PrivateRedis(combination.redis, args=NOEVICTION_SERVER_ARGS)
    tight_needed = _noeviction_needed(lanes)
    try:
        python = env_build(combination.celery, say=say)
        broker.start()
        if tight_needed:
            tight.start()
        say(
            f"Redis {broker.version} on port {broker.port}"
            + (f" (noeviction server on {tight.port})" if tight_needed else "")
            + f"; starting workers for {', '.join(lanes)}"
        )
        noeviction = tight.url if tight_needed else settings.LAB_NOEVICTION_REDIS_URL
        with override_settings(
            LAB_BROKER_REDIS_URL=broker.url, LAB_NOEVICTION_REDIS_URL=noeviction
        ):
            env = child_env(broker.url, tight.url if tight_needed else "")
            run_logs = logs / f"celery-{combination.celery}-redis-{combination.redis}"
            shutil.rmtree(run_logs, ignore_errors=True)  # crash_reason reads this run's only
            workers = lane_workers(python=python, lanes=lanes, env=env, logs=run_logs)
            _run_on_workers(
                records,
                combination=combination,
                runnable=runnable,
                lanes=lanes,
                workers=workers,
                broker=broker.version,
                learner=learner,
                execute=execute,
                say=say,
                estimate=estimate,
            )
    except EnvFailed as exc:
        say(f"{'workers fail' if isinstance(exc, WorkersFailed) else 'not run'}: {exc}")
        records += _not_run(
            exc,
            combination=combination,
            runnable=runnable,
            done={r["experiment"] for r in records},
            workers=workers,
            broker=broker.version,
            seconds=round(time.monotonic() - started, 1),
        )
    finally:
        if workers is not None:
            workers.stop()
        broker.stop()
        tight.stop()
    order = {e.slug: i for i, e in enumerate(experiments)}
    return sorted(records, key=lambda r: order[r["experiment"]])


def _noeviction_needed(lanes: list[str]) -> bool:
    """A lane on the noeviction server gets a server of its own (maxmemory is a whole server's
    setting), of the same version, so its experiments never reach for the dev stack's."""
    return any(
        lane_get(name).broker_url.startswith(settings.LAB_NOEVICTION_REDIS_URL + "/")
        for name in lanes
    )


def _skipped(combination, experiments, redis_lanes, say) -> tuple[list[dict], list[Experiment]]:
    """Records of the experiments this combination does not run, and those it does."""
    records, runnable = [], []
    pins = lock_pins(combination.celery)
    for experiment in experiments:
        reason = skip_reason(experiment, on_redis=redis_lanes[experiment.slug], pins=pins)
        if not reason:
            runnable.append(experiment)
            continue
        say(f"{experiment.slug}: skipped, {reason.split(': ', 1)[0]}")  # the record has it all
        records.append(
            record_for(
                experiment=experiment,
                combination=combination,
                verdict="skipped",
                reason=reason,
                pinned=pinned_versions(combination.celery),
            )
        )
    return records, runnable


def _run_on_workers(
    records: list[dict],
    *,
    combination,
    runnable,
    lanes,
    workers,
    broker,
    learner,
    execute,
    say,
    estimate,
) -> None:
    """Once the workers are up, the experiments' records, added to `records` as they come (a
    failure halfway keeps them). Workers that exit at start leave only the experiments that
    expect it: `runnable` keeps just those, for the caller's "not run" records."""
    exited = ""
    try:
        reported = workers_ready(lanes, workers, timeout=READY_WITHIN)
    except WorkersFailed as exc:
        if not any(e.workers_may_exit for e in runnable):
            raise
        exited, reported = str(exc), {}
        say(f"workers fail: {exc}; running the experiments that expect it")
        records.extend(_workers_exited(exited, combination, runnable, workers, broker))
    mismatch = version_mismatch(combination.celery, reported)
    if mismatch:
        raise EnvFailed(mismatch)
    say(f"running {', '.join(e.slug for e in runnable)}; at most {estimate(0)} left")
    for result in execute(runnable, learner, say):
        verdict = "holds" if result["passed"] else "fails"
        say(f"{result['slug']}: {verdict.upper()} in {result['seconds']:.0f} s")
        experiment = next(e for e in runnable if e.slug == result["slug"])
        records.append(
            record_for(
                experiment=experiment,
                combination=combination,
                verdict=verdict,
                reason=(
                    f"workers exit at start: {own_reason(workers, experiment, exited)}"
                    if exited
                    else ""
                ),
                result=result,
                broker=broker,
                seconds=result["seconds"],
                pinned=pinned_versions(combination.celery) if exited else None,
            )
        )


def _workers_exited(exited: str, combination, runnable, workers, broker: str) -> list[dict]:
    """An experiment about workers that cannot start still runs; the others are recorded as
    "workers fail", with the workers' own words, and leave `runnable`."""
    records = [
        record_for(
            experiment=e,
            combination=combination,
            verdict="workers fail",
            reason=own_reason(workers, e, exited),
            broker=broker,
            pinned=pinned_versions(combination.celery),
        )
        for e in runnable
        if not e.workers_may_exit
    ]
    runnable[:] = [e for e in runnable if e.workers_may_exit]
    return records


def _not_run(
    exc: EnvFailed, *, combination, runnable, done, workers, broker, seconds
) -> list[dict]:
    """Records of the experiments the combination could not run, with why."""
    verdict = "workers fail" if isinstance(exc, WorkersFailed) else "not run"
    return [
        record_for(
            experiment=experiment,
            combination=combination,
            verdict=verdict,
            reason=(
                own_reason(workers, experiment, str(exc))
                if isinstance(exc, WorkersFailed)
                else str(exc)
            ),
            broker=broker,
            seconds=seconds,
            # workers that exit at start report nothing: the lock's pins say what was installed
            pinned=pinned_versions(combination.celery) if verdict == "workers fail" else None,
        )
        for experiment in runnable
        if experiment.slug not in done
    ]

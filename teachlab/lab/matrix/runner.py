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
import re
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.test import override_settings

from teachlab.devstack import Child
from teachlab.lab.experiments.catalog import Experiment
from teachlab.lab.experiments.needs import needs_unmet
from teachlab.lab.lanes import lane_get, worker_name
from teachlab.lab.lanetable import NOEVICTION_SERVER_ARGS
from teachlab.lab.matrix.envs import EnvFailed, env_build, lock_pins, matrix_dir
from teachlab.lab.matrix.records import current_commit, experiment_digest
from teachlab.lab.matrix.servers import PrivateRedis
from teachlab.lab.workers import workers_list

READY_WITHIN = 90.0  # seconds for a combination's workers to report in (first imports are slow)
GIVE_UP_AFTER = 3  # restarts of one worker before its combination is judged unable to start
START_COST = 15.0  # seconds a combination takes to start, for the estimate

Say = Callable[[str], None]


class WorkersFailed(EnvFailed):
    """The combination's workers exit as soon as they start: a finding about the versions
    (kombu 5.7 on Redis 6.0.9), stored like a verdict, not a runner failure."""


def crash_reason(log: Path) -> str:
    """The worker's own words for why it stopped: its last critical line and exception."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    critical = [line.split(": ", 1)[-1] for line in lines if " CRITICAL " in line]
    errors = [line for line in lines if re.match(r"^[\w.]+(Error|Exception)\b.*:", line)]
    found = [*critical[-1:], *errors[-1:]]
    return "; ".join(found) or (lines[-1] if lines else "no log")


@dataclass
class Combination:
    celery: str
    redis: str

    @property
    def label(self) -> str:
        return f"Celery {self.celery} × Redis {self.redis}"


@dataclass
class Supervised:
    """Children restarted when they exit (an experiment's crash step kills workers)."""

    children: list[Child] = field(default_factory=list)
    lane_of: dict[str, str] = field(default_factory=dict)  # child name -> its lane
    kill: bool = True  # workers are killed (their broker goes next); the recorder stops warmly
    stopping: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Supervised:
        for child in self.children:
            child.logs.mkdir(parents=True, exist_ok=True)
            child.start()
        threading.Thread(target=self._watch, daemon=True, name="matrix-supervisor").start()
        return self

    def _watch(self) -> None:
        while not self.stopping.wait(0.3):
            for child in self.children:
                if child.proc is not None and child.proc.poll() is not None:
                    child.restarts += 1
                    child.start()

    def stop(self) -> None:
        self.stopping.set()
        for child in self.children:
            if child.proc is not None and child.proc.poll() is None:
                child.proc.send_signal(signal.SIGKILL if self.kill else signal.SIGTERM)
        for child in self.children:
            if child.proc is not None:
                try:
                    child.proc.wait(timeout=15)
                except Exception:  # noqa: BLE001 - a recorder slow to stop is killed
                    child.proc.kill()


def child_env(broker_url: str, noeviction_url: str = "") -> dict[str, str]:
    return {
        "TEACHLAB_LAB_BROKER_REDIS_URL": broker_url,
        **({"TEACHLAB_LAB_NOEVICTION_REDIS_URL": noeviction_url} if noeviction_url else {}),
        "TEACHLAB_REDIS_DB_APP": str(settings.LAB_MATRIX_DB_APP),
        "DJANGO_SETTINGS_MODULE": "teachlab.settings",
    }


def recorder(logs: Path) -> Supervised:
    """The project's own recorder, on the matrix's app database."""
    argv = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "lab", "record"]
    child = Child("matrix-recorder", argv, child_env(""), logs=logs)
    return Supervised([child], kill=False).start()


def lane_workers(*, python: Path, lanes: list[str], env: dict, logs: Path) -> Supervised:
    children, lane_of = [], {}
    for name in lanes:
        lane = lane_get(name)
        for number in range(1, lane.workers + 1):
            worker = worker_name(lane, number)
            argv = [str(python), "-m", "teachlab.lab.celery_app", "--lane", name, "--name", worker]
            children.append(Child(worker, argv, env, logs=logs))
            lane_of[worker] = name
    return Supervised(children, lane_of=lane_of).start()


def lanes_exited(supervised: Supervised | None, lanes) -> str:
    """How the workers of these lanes exited, in their own words ("" when none did): an
    experiment's record names its own lanes' failures, not the first lane that gave up."""
    found = []
    for child in supervised.children if supervised else []:
        if supervised.lane_of.get(child.name) not in lanes:
            continue
        exits = child.restarts + (child.proc is not None and child.proc.poll() is not None)
        if exits:
            reason = crash_reason(child.logs / f"{child.name}.log")
            found.append(f"{child.name} exited {exits} times: {reason}")
    return "; ".join(found)


def own_reason(supervised: Supervised | None, experiment: Experiment, first: str) -> str:
    """Why the experiment's combination could not start its workers, by its own lanes."""
    own = lanes_exited(supervised, experiment.lanes)
    return own or f"{first} (another lane's worker; {', '.join(experiment.lanes)} had not exited)"


def workers_ready(lanes: list[str], supervised: Supervised, *, timeout: float) -> dict:
    """The versions each lane's workers reported, once every worker is alive."""
    deadline = time.monotonic() + timeout
    while True:
        alive = [w for w in workers_list() if w["alive"] and w["lane"] in lanes]
        found = {lane: [w for w in alive if w["lane"] == lane] for lane in lanes}
        if all(len(found[lane]) >= lane_get(lane).workers for lane in lanes):
            return {lane: found[lane][0]["versions"] for lane in lanes}
        for child in supervised.children:
            if child.restarts >= GIVE_UP_AFTER:
                reason = crash_reason(child.logs / f"{child.name}.log")
                raise WorkersFailed(f"{child.name} exited {child.restarts + 1} times: {reason}")
        if time.monotonic() > deadline:
            tails = []
            for child in supervised.children:
                log = child.logs / f"{child.name}.log"
                text = log.read_text(errors="replace")[-600:] if log.exists() else ""
                tails.append(f"{child.name}: {text.strip()}")
            raise EnvFailed(f"workers not alive within {timeout:.0f} s; " + " | ".join(tails))
        time.sleep(0.3)


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
    started = time.monotonic()
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
    if not runnable:
        return records
    broker, workers = PrivateRedis(combination.redis), None
    lanes = sorted({lane for e in runnable for lane in e.lanes})
    # The noeviction lane's server of its own (maxmemory is a whole server's setting), of the
    # same version, so its experiments never reach for the dev stack's server.
    tight = PrivateRedis(combination.redis, args=NOEVICTION_SERVER_ARGS)
    tight_needed = any(
        lane_get(name).broker_url.startswith(settings.LAB_NOEVICTION_REDIS_URL + "/")
        for name in lanes
    )
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
        env = child_env(broker.url, tight.url if tight_needed else "")
        run_logs = logs / f"celery-{combination.celery}-redis-{combination.redis}"
        shutil.rmtree(run_logs, ignore_errors=True)  # crash_reason reads this run's lines only
        noeviction = tight.url if tight_needed else settings.LAB_NOEVICTION_REDIS_URL
        with override_settings(
            LAB_BROKER_REDIS_URL=broker.url, LAB_NOEVICTION_REDIS_URL=noeviction
        ):
            workers = lane_workers(python=python, lanes=lanes, env=env, logs=run_logs)
            exited = ""
            try:
                reported = workers_ready(lanes, workers, timeout=READY_WITHIN)
            except WorkersFailed as exc:
                # An experiment about workers that cannot start still runs; the others are
                # recorded as "workers fail" below, with the workers' own words.
                if not any(e.workers_may_exit for e in runnable):
                    raise
                exited, reported = str(exc), {}
                say(f"workers fail: {exc}; running the experiments that expect it")
                records.extend(
                    record_for(
                        experiment=e,
                        combination=combination,
                        verdict="workers fail",
                        reason=own_reason(workers, e, exited),
                        broker=broker.version,
                        pinned=pinned_versions(combination.celery),
                    )
                    for e in runnable
                    if not e.workers_may_exit
                )
                runnable = [e for e in runnable if e.workers_may_exit]
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
                        broker=broker.version,
                        seconds=result["seconds"],
                        pinned=pinned_versions(combination.celery) if exited else None,
                    )
                )
    except EnvFailed as exc:
        verdict = "workers fail" if isinstance(exc, WorkersFailed) else "not run"
        say(f"{verdict}: {exc}")
        done = {r["experiment"] for r in records}
        for experiment in runnable:
            if experiment.slug not in done:
                records.append(
                    record_for(
                        experiment=experiment,
                        combination=combination,
                        verdict=verdict,
                        reason=(
                            own_reason(workers, experiment, str(exc))
                            if isinstance(exc, WorkersFailed)
                            else str(exc)
                        ),
                        broker=broker.version,
                        seconds=round(time.monotonic() - started, 1),
                        # workers that exit at start report nothing: the lock's pins say
                        # what was installed
                        pinned=pinned_versions(combination.celery)
                        if verdict == "workers fail"
                        else None,
                    )
                )
    finally:
        if workers is not None:
            workers.stop()
        broker.stop()
        tight.stop()
    order = {e.slug: i for i, e in enumerate(experiments)}
    return sorted(records, key=lambda r: order[r["experiment"]])

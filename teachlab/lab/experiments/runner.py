"""Run an experiment's steps against the real lanes, then judge the runs by its checks.

The jobs worker (one attempt, queued by the experiment page) and `lab experiment`
(headless, possibly several at once) both call `experiment_execute`. Runs of one experiment
go side by side in threads unless a run waits `after` another; a crash or warm shutdown goes
to the worker that holds the run's task at that moment, as the lab's registry reports it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import close_old_connections, connection
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from teachlab.dbthreads import connection_release
from teachlab.lab.errors import LabError
from teachlab.lab.experiments.catalog import Experiment
from teachlab.lab.experiments.charts import copies_histogram, receipts_over_time
from teachlab.lab.experiments.checks import check_evaluate
from teachlab.lab.experiments.feeder import TICK, feeder_run_create, feeder_tick
from teachlab.lab.experiments.leftover import bindings_evict, run_messages_left
from teachlab.lab.experiments.memory import (
    memory_fill,
    memory_free,
    queued_now,
    unacked_writes_refused,
)
from teachlab.lab.experiments.metrics import RUN_METRICS, Observation, run_metric
from teachlab.lab.experiments.observe import observation_for_run
from teachlab.lab.firing import run_fire
from teachlab.lab.lanes import lane_get
from teachlab.lab.models import Run
from teachlab.lab.run_versions import run_versions_fill
from teachlab.lab.settle import copies_pending, run_settle
from teachlab.lab.versions import broker_versions, versions_text
from teachlab.lab.workers import (
    worker_control,
    worker_disconnect,
    worker_holding,
    worker_pause,
    worker_resume,
    worker_stop,
    workers_list,
)

log = logging.getLogger(__name__)
POLL = 0.3  # seconds between looks at a run's events while waiting `until`
READY_WITHIN = 45.0  # seconds a lane may take to have all its workers back
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
MANY_TASKS = 5  # runs with at least this many tasks get the histogram and receipts plot

Progress = Callable[[str], None]


@dataclass
class ExperimentRun:
    """One run of an experiment while its steps play: the spec, the fired run, what happened."""

    spec: dict
    label: str = ""  # "Run “crash”: " when the experiment has several runs; "" otherwise
    run: Run | None = None
    errors: list[str] = field(default_factory=list)
    log: list[tuple[float, str]] = field(default_factory=list)
    finished: threading.Event = field(default_factory=threading.Event)
    stop_feeding: threading.Event = field(default_factory=threading.Event)
    paused: list = field(default_factory=list)  # worker processes a `pause` step froze
    # what the memory steps saw on the broker (`fill: memory`), for the run's metrics
    broker: dict = field(default_factory=dict)


class StepFailed(LabError):
    """A step could not be carried out (no worker held the task, broker away, …)."""


# --- steps -------------------------------------------------------------------------------


def _say(state: ExperimentRun, started: float, text: str, progress: Progress | None) -> None:
    state.log.append((round(time.time() - started, 1), text))
    if progress is not None:
        progress(f"{state.label}{text}")


def _times(n: float) -> str:
    n = int(n) if float(n).is_integer() else n
    return {1: "once", 2: "twice"}.get(n, f"{n:g} times")


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


def _fire(*, state: ExperimentRun, experiment: Experiment, learner) -> None:
    spec = state.spec
    label = f"experiment:{experiment.slug}:{spec['name']}"
    if spec.get("feeder"):
        state.run = feeder_run_create(
            learner=learner, lane=spec["lane"], params=spec["params"], label=label
        )
        threading.Thread(
            target=_feed, args=(state,), name=f"feeder-{state.run.id}", daemon=True
        ).start()
    else:
        state.run = run_fire(
            learner=learner,
            lane=spec["lane"],
            params=spec["params"],
            label=label,
            check_limits=False,  # experiments are preset and short; the attempt is limited
        )


def _feed(state: ExperimentRun) -> None:
    """The periodic feeder: every tick, publish what has come due."""
    sent: set[int] = set()
    try:
        while not state.stop_feeding.is_set() and len(sent) < len(state.run.task_ids):
            feeder_tick(run=state.run, sent=sent)
            connection_release()
            state.stop_feeding.wait(TICK)
    except Exception as exc:  # the verdict must say the feeder broke, not hang
        log.exception("feeder for run %s failed", state.run.id)
        state.errors.append(f"the feeder stopped: {exc}")
    finally:
        connection.close()


def _condition_met(*, states: dict[str, ExperimentRun], condition: dict) -> bool:
    """An `until` reads its own run or, when it names one, another run of the experiment."""
    watched = states[condition["run"]].run
    if watched is None:  # that run has not fired yet
        return False
    spec = {k: v for k, v in condition.items() if k != "within"}
    observation = observation_for_run(run=watched)
    return check_evaluate(check=spec, observations={condition["run"]: observation}).passed


def _until(*, states: dict[str, ExperimentRun], condition: dict) -> bool:
    deadline = time.monotonic() + float(condition["within"])
    while time.monotonic() < deadline:
        if _condition_met(states=states, condition=condition):
            return True
        connection_release()
        time.sleep(POLL)
    return _condition_met(states=states, condition=condition)


def _holder(*, run: Run) -> str | None:
    """The alive worker holding one of the run's deliveries right now. A worker just killed
    still lists its deliveries (its last heartbeat) and its copy stays pending: never it."""
    lane = lane_get(run.lane)
    alive = {w["name"] for w in _alive(lane.name)}
    for task_id in run.task_ids:
        name = worker_holding(task_id=task_id, lane=lane.name)
        if name in alive:
            return name
    pending = {
        hostname.split("@", 1)[0]: n
        for hostname, n in copies_pending(run).items()
        if hostname.split("@", 1)[0] in alive
    }
    if pending:
        return max(pending, key=pending.get)
    return None


def _alive(lane: str) -> list[dict]:
    return [w for w in workers_list() if w["lane"] == lane and w["alive"]]


def _target_worker(*, state: ExperimentRun, action: str, target: str) -> str:
    lane = state.spec["lane"]
    if target == "holder" and state.run is not None:
        name = _holder(run=state.run)
        if name is None:
            raise StepFailed(f"no worker of {lane} held the run's task, so nothing to {action}")
    else:
        alive = _alive(lane)
        if not alive:
            raise StepFailed(f"no worker of {lane} is alive to {action}")
        name = alive[0]["name"]
    return name


def _stop_worker(
    *, state: ExperimentRun, action: str, target: str, grace: float | None = None
) -> str:
    name = _target_worker(state=state, action=action, target=target)
    if grace is not None:
        worker_stop(name=name, grace=grace)
    elif action == "disconnect":
        worker_disconnect(name=name)
    else:
        worker_control(name=name, action=action)
    return name


def lane_ready(*, lane: str, within: float = READY_WITHIN) -> bool:
    """Wait until every worker the lane should have is alive (the supervisor restarts them)."""
    wanted = lane_get(lane).workers
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        alive = _alive(lane)
        if len(alive) >= wanted and all(w.get("state") == "running" for w in alive):
            return True
        connection_release()
        time.sleep(0.5)
    return False


def _run_steps(
    *,
    state: ExperimentRun,
    experiment: Experiment,
    learner,
    started: float,
    progress: Progress | None,
    on_fired: Callable[[str, Run], None] | None,
    waits_for: ExperimentRun | None,
    states: dict[str, ExperimentRun],
) -> None:
    try:
        if waits_for is not None:
            waits_for.finished.wait()
        for step in state.spec["steps"]:
            if step == "fire":
                _fire(state=state, experiment=experiment, learner=learner)
                n = len(state.run.task_ids)
                _say(
                    state,
                    started,
                    f"Sent {n} task{'s' if n != 1 else ''} to {state.run.lane}",
                    progress,
                )
                if on_fired is not None:
                    on_fired(state.spec["name"], state.run)
                continue
            ((key, value),) = step.items()
            if key == "wait":
                _say(state, started, f"Waiting {value:g} s", progress)
                connection_release()
                time.sleep(float(value))
            elif key == "until":
                _say(state, started, until_text(value, own_run=state.spec["name"]), progress)
                if not _until(states=states, condition=value):
                    _say(
                        state,
                        started,
                        f"Still not there after {value['within']:g} s; going on",
                        progress,
                    )
            elif key == "crash":
                name = _stop_worker(state=state, action="crash", target=value)
                _say(
                    state,
                    started,
                    f"Crashed worker {name} (SIGKILL, as the OOM killer would)",
                    progress,
                )
            elif key == "shutdown" and isinstance(value, dict):
                grace = float(value["grace"])
                _say(
                    state,
                    started,
                    f"Stopping the {value['worker']} worker with {grace:g} s to finish",
                    progress,
                )
                name = _stop_worker(
                    state=state, action="shutdown", target=value["worker"], grace=grace
                )
                _say(
                    state,
                    started,
                    f"Warm shutdown of {name}; SIGKILL after {grace:g} s if it is still up",
                    progress,
                )
            elif key == "shutdown":
                name = _stop_worker(state=state, action="shutdown", target=value)
                _say(state, started, f"Warm shutdown of worker {name} (SIGTERM)", progress)
            elif key == "disconnect":
                name = _stop_worker(state=state, action="disconnect", target=value)
                _say(
                    state,
                    started,
                    f"The broker closed worker {name}'s connections (as a network cut would)",
                    progress,
                )
            elif key == "evict":
                gone = bindings_evict(lane=state.spec["lane"])
                _say(state, started, f"Deleted the binding sets {', '.join(gone)}", progress)
            elif key == "pause":
                name = _target_worker(state=state, action="pause", target=value)
                state.paused.append(worker_pause(name=name))
                _say(
                    state,
                    started,
                    f"Paused worker {name} (SIGSTOP), as a long stall would",
                    progress,
                )
            elif key == "resume":
                _resume(state)
                _say(state, started, "Let the paused worker go on (SIGCONT)", progress)
            elif key == "fill":
                _fill(state=state, started=started, progress=progress)
            elif key == "free":
                _free(state=state, started=started, progress=progress)
            elif key == "ready":
                lane = state.spec["lane"]
                _say(state, started, f"Waiting for every {lane} worker to be up", progress)
                if not lane_ready(lane=lane):
                    raise StepFailed(
                        f"the workers of {lane} did not come back within {READY_WITHIN:g} s"
                    )
    except LabError as exc:
        state.errors.append(str(exc))
        _say(state, started, f"Stopped: {exc}", progress)
    except Exception as exc:
        log.exception("experiment %s, run %s failed", experiment.slug, state.spec["name"])
        state.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        _leave_no_trace(state)
        state.stop_feeding.set()
        state.finished.set()
        connection.close()


def _resume(state: ExperimentRun) -> None:
    while state.paused:
        worker_resume(state.paused.pop())


def _fill(*, state: ExperimentRun, started: float, progress: Progress | None) -> None:
    lane = state.spec["lane"]
    found = memory_fill(lane=lane)
    state.broker["filled"] = found
    task_ids = state.run.task_ids if state.run is not None else []
    state.broker["queued_at_limit"] = queued_now(lane=lane, task_ids=task_ids)
    _say(
        state,
        started,
        f"Filled {lane}'s Redis {found['over_by'] / 1024:.0f} KB past its maxmemory; it now "
        f"refuses writes, and {state.broker['queued_at_limit']} of the run's messages wait "
        "in the queue",
        progress,
    )


def _refusals_count(state: ExperimentRun) -> None:
    """The `ZADD` refusals since the fill: the run's own (the lane's server is its own)."""
    before = state.broker["filled"]["refused_before"]
    state.broker["unacked_writes_refused"] = (
        unacked_writes_refused(lane=state.spec["lane"]) - before
    )


def _free(*, state: ExperimentRun, started: float, progress: Progress | None) -> None:
    if "filled" in state.broker:
        _refusals_count(state)
    gone = memory_free(lane=state.spec["lane"])
    state.broker["freed"] = True
    _say(state, started, f"Deleted the {gone} filler values: Redis takes writes again", progress)


def _leave_no_trace(state: ExperimentRun) -> None:
    """A run that stopped half-way never leaves a worker frozen or its broker full."""
    try:
        _resume(state)
        if "filled" in state.broker and not state.broker.get("freed"):
            _refusals_count(state)
            memory_free(lane=state.spec["lane"])
            state.broker["freed"] = True
    except Exception:  # noqa: BLE001 - the run's own error is the one to report
        log.exception("cleaning up after run %s", state.spec["name"])


# --- verdict -------------------------------------------------------------------------------


def run_report(*, observation: Observation) -> dict:
    report = {name: run_metric(observation=observation, what=name) for name in SUMMARY_METRICS}
    if len(observation.tasks) >= MANY_TASKS:
        report["histogram"] = copies_histogram(observation=observation)
        bucket = max(1.0, round(observation.duration / 40))
        report["receipts_over_time"] = receipts_over_time(observation=observation, bucket=bucket)
        report["bucket"] = bucket
    return report


def _close(predicted: float, observed: float) -> bool:
    """Counts must be right; a ratio such as the amplification within a fifth counts."""
    if float(observed).is_integer():
        return abs(predicted - observed) < 0.5
    return abs(predicted - observed) <= 0.2 * abs(observed)


def prediction_verdict(*, experiment: Experiment, observations: dict, value) -> dict:
    """What the learner predicted beside what happened, and whether they match."""
    prediction = experiment.prediction
    if prediction["kind"] == "number":
        observe = prediction["observe"]
        observed = run_metric(observation=observations[observe["run"]], what=observe["what"])
        matched = value is not None and observed is not None and _close(float(value), observed)
        return {
            "kind": "number",
            "prompt": prediction["prompt"],
            "value": value,
            "observed": observed,
            "observed_label": "never" if observed is None else f"{observed:g}",
            "unit": prediction.get("unit", ""),
            "matched": matched,
        }
    return choice_verdict(
        prompt=prediction["prompt"],
        choices=prediction["choices"],
        observations=observations,
        value=value,
    )


def choice_verdict(*, prompt: str, choices: list[dict], observations: dict, value) -> dict:
    """The learner's choice beside the first choice whose condition the runs meet."""
    observed_choice = None
    for choice in choices:
        if check_evaluate(check=choice["when"], observations=observations).passed:
            observed_choice = choice
            break
    labels = {c["id"]: c["label"] for c in choices}
    return {
        "kind": "choice",
        "prompt": prompt,
        "value": value,
        "value_label": labels.get(value, ""),
        "observed": observed_choice["id"] if observed_choice else None,
        "observed_label": observed_choice["label"] if observed_choice else "none of the choices",
        "matched": value is not None
        and observed_choice is not None
        and value == observed_choice["id"],
    }


def timing_parse(*, experiment: Experiment, raw) -> str | None:
    """The learner's answer to the timing question, when the experiment asks one."""
    timing = experiment.prediction.get("timing")
    if not timing:
        return None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise ValueError("Say when you expect it to happen too: pick one of the timings.")
    if raw not in [c["id"] for c in timing["choices"]]:
        raise ValueError("Pick one of the timings offered.")
    return raw


def prediction_parse(*, experiment: Experiment, raw) -> float | str | None:
    """The learner's prediction from a form or CLI; ValueError with a message when it is bad."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    prediction = experiment.prediction
    if prediction["kind"] == "number":
        try:
            number = float(str(raw).strip())
        except ValueError:
            raise ValueError(
                f"Your prediction must be a number; {str(raw)[:40]!r} is not."
            ) from None
        if not 0 <= number <= 100_000:
            raise ValueError("Your prediction must be between 0 and 100,000.")
        return int(number) if number.is_integer() else number
    ids = [c["id"] for c in prediction["choices"]]
    if raw not in ids:
        raise ValueError("Pick one of the choices offered.")
    return raw


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
    several = len(experiment.runs) > 1
    states = {
        spec["name"]: ExperimentRun(spec=spec, label=f"Run “{spec['name']}”: " if several else "")
        for spec in experiment.runs
    }
    threads = []
    for spec in experiment.runs:
        thread = threading.Thread(
            target=_run_steps,
            kwargs={
                "state": states[spec["name"]],
                "experiment": experiment,
                "learner": learner,
                "started": started,
                "progress": progress,
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

    errors = [f"{name}: {e}" for name, s in states.items() for e in s.errors]
    observations: dict[str, Observation] = {}
    runs: dict[str, dict] = {}
    for name, state in states.items():
        if state.run is None:
            continue
        state.run.refresh_from_db()
        run_settle(state.run)
        run_versions_fill(state.run)
        observation = observation_for_run(run=state.run, duration=time.time() - state.run.fired_at)
        observation.messages_left = run_messages_left(run=state.run)
        observation.broker = state.broker
        observations[name] = observation
        runs[name] = {
            "id": state.run.id,
            "lane": state.run.lane,
            "params": state.spec["params"],
            "feeder": bool(state.spec.get("feeder")),
            "steps": state.log,
            "report": run_report(observation=observation),
            "versions": state.run.versions,
            "versions_text": versions_text(state.run.versions),
        }
    checks = []
    if len(observations) == len(states):
        versions = {name: run_check_versions(run) for name, run in runs.items()}
        checks = [
            check_evaluate(check=check, observations=observations).as_dict()
            for check in experiment.checks
            if check_applies(check=check, versions=versions)
        ]
        verdict = prediction_verdict(
            experiment=experiment, observations=observations, value=prediction
        )
        if experiment.prediction.get("timing"):
            verdict["timing"] = choice_verdict(
                prompt=experiment.prediction["timing"]["prompt"],
                choices=experiment.prediction["timing"]["choices"],
                observations=observations,
                value=timing,
            )
    else:
        verdict = {"kind": experiment.prediction["kind"], "value": prediction, "observed": None}
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


# check field -> the version it is compared with (`on_redis: ">=6.2"`, `on_kombu: "<5.7"`)
CHECK_VERSION_KEYS = {"on_redis": "redis", "on_kombu": "kombu", "on_celery": "celery"}


def run_check_versions(run: dict) -> dict[str, str]:
    """What a check's `on_*` range is compared with: the run's Redis server and kombu as its
    workers reported them at firing. Where no worker came up to report (kombu 5.7 on Redis
    6.0), the Redis server is asked now; kombu is then unknown and an `on_kombu` check left
    out (and so an `on_celery` one)."""
    lane = lane_get(run["lane"])
    found = {key: run["versions"].get(key, "") for key in CHECK_VERSION_KEYS.values()}
    if lane.is_redis and not found["redis"]:
        found["redis"] = broker_versions(kind=lane.kind, url=lane.broker_url).get("redis", "")
    return found


def check_applies(*, check: dict, versions: dict[str, dict[str, str]]) -> bool:
    """A check with `on_redis` / `on_kombu` / `on_celery` counts only where its run's versions
    are in range."""
    for name, key in CHECK_VERSION_KEYS.items():
        if not check.get(name):
            continue
        try:
            found = Version(versions.get(check["run"], {}).get(key, ""))
        except InvalidVersion:
            return False
        if not SpecifierSet(check[name]).contains(found, prereleases=True):
            return False
    return True


def metric_label(name: str) -> str:
    return RUN_METRICS[name][1] if name in RUN_METRICS else name

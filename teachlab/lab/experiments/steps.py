"""Play one run's steps (lessons/experiments/README.md lists them): fire, wait, crash, …

Each step kind is a function of (the run's state, the step's value, every run's state), so a
new kind is one function and one line in STEPS.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from django.db import connection

from teachlab.core.dbthreads import connection_release
from teachlab.lab.experiments.feeder import TICK, feeder_run_create, feeder_tick
from teachlab.lab.experiments.leftover import bindings_evict
from teachlab.lab.experiments.memory import (
    memory_fill,
    memory_free,
    queued_now,
    unacked_writes_refused,
)
from teachlab.lab.experiments.playing import ExperimentRun, StepFailed
from teachlab.lab.experiments.targets import READY_WITHIN, lane_ready, target_worker, worker_act
from teachlab.lab.experiments.until import until_text, until_wait
from teachlab.lab.models import Run
from teachlab.lab.runs.errors import LabError
from teachlab.lab.runs.firing import run_fire
from teachlab.lab.worker.workers import worker_pause, worker_resume

log = logging.getLogger(__name__)
States = dict[str, ExperimentRun]


def _fire(*, state: ExperimentRun, slug: str, learner) -> None:
    spec = state.spec
    label = f"experiment:{slug}:{spec['name']}"
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
    n = len(state.run.task_ids)
    state.say(f"Sent {n} task{'s' if n != 1 else ''} to {state.run.lane}")


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


def _wait(state: ExperimentRun, value, _states: States) -> None:
    state.say(f"Waiting {value:g} s")
    connection_release()
    time.sleep(float(value))


def _until(state: ExperimentRun, value: dict, states: States) -> None:
    state.say(until_text(value, own_run=state.spec["name"]))
    if not until_wait(states=states, condition=value):
        state.say(f"Still not there after {value['within']:g} s; going on")


def _crash(state: ExperimentRun, value: str, _states: States) -> None:
    name = worker_act(state=state, action="crash", target=value)
    state.say(f"Crashed worker {name} (SIGKILL, as the OOM killer would)")


def _shutdown(state: ExperimentRun, value, _states: States) -> None:
    if not isinstance(value, dict):
        name = worker_act(state=state, action="shutdown", target=value)
        state.say(f"Warm shutdown of worker {name} (SIGTERM)")
        return
    grace = float(value["grace"])
    state.say(f"Stopping the {value['worker']} worker with {grace:g} s to finish")
    name = worker_act(state=state, action="shutdown", target=value["worker"], grace=grace)
    state.say(f"Warm shutdown of {name}; SIGKILL after {grace:g} s if it is still up")


def _disconnect(state: ExperimentRun, value: str, _states: States) -> None:
    name = worker_act(state=state, action="disconnect", target=value)
    state.say(f"The broker closed worker {name}'s connections (as a network cut would)")


def _evict(state: ExperimentRun, _value, _states: States) -> None:
    gone = bindings_evict(lane=state.spec["lane"])
    state.say(f"Deleted the binding sets {', '.join(gone)}")


def _pause(state: ExperimentRun, value: str, _states: States) -> None:
    name = target_worker(state=state, action="pause", target=value)
    state.paused.append(worker_pause(name=name))
    state.say(f"Paused worker {name} (SIGSTOP), as a long stall would")


def _resume(state: ExperimentRun) -> None:
    while state.paused:
        worker_resume(state.paused.pop())


def _resume_step(state: ExperimentRun, _value, _states: States) -> None:
    _resume(state)
    state.say("Let the paused worker go on (SIGCONT)")


def _fill(state: ExperimentRun, _value, _states: States) -> None:
    lane = state.spec["lane"]
    found = memory_fill(lane=lane)
    state.broker["filled"] = found
    task_ids = state.run.task_ids if state.run is not None else []
    state.broker["queued_at_limit"] = queued_now(lane=lane, task_ids=task_ids)
    state.say(
        f"Filled {lane}'s Redis {found['over_by'] / 1024:.0f} KB past its maxmemory; it now "
        f"refuses writes, and {state.broker['queued_at_limit']} of the run's messages wait "
        "in the queue"
    )


def _refusals_count(state: ExperimentRun) -> None:
    """The `ZADD` refusals since the fill: the run's own (the lane's server is its own)."""
    before = state.broker["filled"]["refused_before"]
    state.broker["unacked_writes_refused"] = (
        unacked_writes_refused(lane=state.spec["lane"]) - before
    )


def _free(state: ExperimentRun, _value, _states: States) -> None:
    if "filled" in state.broker:
        _refusals_count(state)
    gone = memory_free(lane=state.spec["lane"])
    state.broker["freed"] = True
    state.say(f"Deleted the {gone} filler values: Redis takes writes again")


def _ready(state: ExperimentRun, _value, _states: States) -> None:
    lane = state.spec["lane"]
    state.say(f"Waiting for every {lane} worker to be up")
    if not lane_ready(lane=lane):
        raise StepFailed(f"the workers of {lane} did not come back within {READY_WITHIN:g} s")


STEPS: dict[str, Callable[[ExperimentRun, object, States], None]] = {
    "wait": _wait,
    "until": _until,
    "crash": _crash,
    "shutdown": _shutdown,
    "disconnect": _disconnect,
    "evict": _evict,
    "pause": _pause,
    "resume": _resume_step,
    "fill": _fill,
    "free": _free,
    "ready": _ready,
}


def leave_no_trace(state: ExperimentRun) -> None:
    """A run that stopped half-way never leaves a worker frozen or its broker full."""
    try:
        _resume(state)
        if "filled" in state.broker and not state.broker.get("freed"):
            _refusals_count(state)
            memory_free(lane=state.spec["lane"])
            state.broker["freed"] = True
    except Exception:  # noqa: BLE001 - the run's own error is the one to report
        log.exception("cleaning up after run %s", state.spec["name"])


def run_steps(
    *,
    state: ExperimentRun,
    slug: str,
    learner,
    on_fired: Callable[[str, Run], None] | None,
    waits_for: ExperimentRun | None,
    states: States,
) -> None:
    """Play the run's steps in its own thread; a failed step stops the run with its reason."""
    try:
        if waits_for is not None:
            waits_for.finished.wait()
        for step in state.spec["steps"]:
            if step == "fire":
                _fire(state=state, slug=slug, learner=learner)
                if on_fired is not None:
                    on_fired(state.spec["name"], state.run)
                continue
            ((key, value),) = step.items()
            STEPS[key](state, value, states)
    except LabError as exc:
        state.errors.append(str(exc))
        state.say(f"Stopped: {exc}")
    except Exception as exc:
        log.exception("experiment %s, run %s failed", slug, state.spec["name"])
        state.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        leave_no_trace(state)
        state.stop_feeding.set()
        state.finished.set()
        connection.close()

"""A pool child killed under a live prefork parent: the parent's task_failure becomes a lab
`failed` event on every Celery the matrix runs. Celery 5.3 to 5.6 send that signal with no
request context pushed (5.5.3 `celery/worker/request.py` `Request.on_failure`), so the handler
is called here exactly so: the task's own `request` empty, the failure in the arguments."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from billiard.exceptions import WorkerLostError
from celery import Celery

from lessons.models import Learner
from teachlab.lab.eventlog.recorder import Recorder
from teachlab.lab.eventlog.stream import log_open, stream_read
from teachlab.lab.experiments.metrics import task_metric
from teachlab.lab.experiments.observe import observation_for_run
from teachlab.lab.models import Kind, Run
from teachlab.lab.worker import events
from teachlab.lab.worker.tasks import TASK_LATE


@pytest.fixture
def lab_signals():
    """teachlab.lab.worker.signals, imported here and not at the top: importing it connects the lab's
    handlers to Celery's global signals for the rest of the process. At the top, collection did
    that in every xdist worker, and a worker that ran an in-process lab task but not this
    module's tests (tests/lab/test_guard_work.py) recorded real events. Disconnected after."""
    from celery import signals as celery_signals

    from teachlab.lab.worker import signals

    yield signals
    for signal in vars(celery_signals).values():
        if isinstance(signal, celery_signals.Signal):
            for name, handler in vars(signals).items():
                if name.startswith("on_") and callable(handler):
                    signal.disconnect(handler)


def _lab_task():
    app = Celery("failure-signal-test", set_as_current=False)

    @app.task(name=TASK_LATE, acks_late=True, shared=False)
    def work(**_):
        return None

    return work


def _run() -> Run:
    learner = Learner.objects.create()
    run = Run.objects.create(learner=learner, lane="redis-prefork", task_ids=["t1"],
                             params={"count": 1}, visibility_timeout=10,
                             fired_at=time.time() - 5)  # fmt: skip
    log_open(run.id)
    return run


def _kwargs(run: Run) -> dict:
    return {"run": run.id, "index": 0, "fired_at": run.fired_at, "vt": 10, "tasks": 1,
            "published_at": run.fired_at}  # fmt: skip


def _failed(run: Run) -> list[dict]:
    return [e for e in stream_read(run.id) if e["kind"] == Kind.FAILED]


@pytest.mark.django_db(transaction=True)
def test_a_killed_child_is_recorded_failed_when_the_signal_brings_no_request_context(lab_signals):
    run, task = _run(), _lab_task()
    kwargs = _kwargs(run)
    request = SimpleNamespace(id="t1", kwargs=kwargs, hostname="redis-prefork-1@test", eta=None,
                              delivery_info={"redelivered": False}, time_start=time.time(),
                              request_dict={"id": "t1", "kwargs": kwargs,
                                            "hostname": "redis-prefork-1@test",
                                            "delivery_info": {"redelivered": False}})  # fmt: skip
    events.event_received(request)  # the parent's task_received: the receipt token
    assert task.request.id is None  # nothing pushed, as in 5.5's parent

    lost = WorkerLostError("Worker exited prematurely: signal 9 (SIGKILL) Job: 0.")
    lab_signals.on_failure(sender=task, task_id="t1", exception=lost, args=(), kwargs=kwargs,
                           traceback=None, einfo=None)  # fmt: skip

    [failed] = _failed(run)
    assert failed["task_id"] == "t1" and failed["copy"] == 1
    assert failed["worker"] == "redis-prefork-1@test"
    assert "WorkerLostError" in failed["data"]["error"]
    assert not events.held and not events.held_requests  # the copy is over in the parent
    Recorder(runs=[run.id]).step(block_ms=100)
    observed = observation_for_run(run=run)  # what the experiment's check reads
    assert task_metric(observation=observed, what="worker_lost") == {"t1": 1.0}


@pytest.mark.django_db(transaction=True)
def test_a_failure_whose_request_was_let_go_is_still_recorded_from_the_signal_arguments(
    lab_signals,
):
    run, task = _run(), _lab_task()
    events.worker_hostname["hostname"] = "redis-prefork-1@test"
    lost = WorkerLostError("Worker exited prematurely: signal 9 (SIGKILL) Job: 0.")
    lab_signals.on_failure(sender=task, task_id="t1", exception=lost, args=(),
                           kwargs=_kwargs(run), traceback=None, einfo=None)  # fmt: skip
    [failed] = _failed(run)
    assert failed["task_id"] == "t1" and failed["worker"] == "redis-prefork-1@test"

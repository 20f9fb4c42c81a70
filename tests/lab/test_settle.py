"""Settling (teachlab/lab/eventlog/settle.py) decides the end of a run from its log, reduced by the same
RunState the live readers hold: a recorder that is behind does not keep the run open."""

from __future__ import annotations

import time

import pytest

from lessons.models import Learner
from teachlab.lab.eventlog.labevent import DONE
from teachlab.lab.eventlog.recorder import Recorder
from teachlab.lab.eventlog.settle import run_settle
from teachlab.lab.eventlog.stream import log_open, stream_read
from teachlab.lab.models import Kind, Run
from teachlab.lab.runs.reading import run_events, run_summary
from tests.lab.test_runstate import _deliver


def _run() -> Run:
    run = Run.objects.create(learner=Learner.objects.create(), lane="redis-short",
                             task_ids=["a", "b", "c"], params={"count": 3},
                             visibility_timeout=10, fired_at=time.time() - 5)  # fmt: skip
    log_open(run.id)
    return run


@pytest.mark.django_db(transaction=True)
def test_a_run_settles_from_its_log_while_the_recorder_has_stored_none_of_it():
    run = _run()
    for index, task_id in enumerate(run.task_ids):
        _deliver(run, task_id, index, ends=(Kind.STARTED, Kind.FINISHED))
    assert not run.events.exists()  # no recorder has run

    run_settle(run)

    assert Run.objects.get(pk=run.pk).status == Run.Status.DONE
    end = [e for e in stream_read(run.id) if e["kind"] == DONE]
    assert len(end) == 1 and end[0]["summary"]["receipts"] == 3
    assert end[0]["summary"]["executions"] == 3
    # The pages read the log too until the rows follow, and then read the same.
    assert run_summary(run)["receipts"] == 3 and len(run_events(run)) == 9
    Recorder(runs=[run.id]).step(block_ms=100)
    assert run.events.count() == 9
    assert run_summary(run)["receipts"] == 3 and len(run_events(run)) == 9


@pytest.mark.django_db(transaction=True)
def test_a_run_with_a_delivery_still_open_stays_running_whatever_the_database_holds():
    run = _run()
    _deliver(run, "a", 0, ends=(Kind.STARTED, Kind.FINISHED))
    _deliver(run, "b", 1, ends=(Kind.STARTED, Kind.FINISHED))
    _deliver(run, "c", 2, ends=(Kind.STARTED,))  # c's body is still running
    Recorder(runs=[run.id]).step(block_ms=100)

    assert run_settle(run).status == Run.Status.RUNNING
    assert Run.objects.get(pk=run.pk).status == Run.Status.RUNNING

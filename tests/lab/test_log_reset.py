"""A run's log after the lab's Redis came back empty (restarted with nothing on disk): new
events carry on after what the database stored instead of reusing stored seqs, copies and
counters. On the tests' private Redis, with only this run's keys deleted (the rest of the
session's Redis is other tests' data); tests/drills/test_redis_restart.py restarts a real one.
"""

from __future__ import annotations

import time

import pytest

from lessons.models import Learner
from teachlab.lab.eventlog.labevent import LabEvent
from teachlab.lab.eventlog.recorder import events_store
from teachlab.lab.eventlog.stream import entry_append, log_open, reset_key, stream_key, stream_read
from teachlab.lab.models import Run
from teachlab.lab.runs.store import app_redis

pytestmark = pytest.mark.django_db


def _run() -> Run:
    return Run.objects.create(
        learner=Learner.objects.create(),
        lane="redis-short",
        params={"count": 2},
        task_ids=["task-a", "task-b"],
        visibility_timeout=10,
        fired_at=time.time(),
    )


def _append(run: Run, kind: str, task_id: str, copy: int = 0) -> tuple[int, int]:
    fields = {"k": kind, "ti": task_id, "i": "0", "w": "w1@test", "r": "0",
              "a": repr(time.time()), "n_tasks": "2"}  # fmt: skip
    return entry_append(run_id=run.id, kind=kind, task_id=task_id, known_copy=copy, fields=fields)


def _redis_loses(run: Run) -> None:
    r = app_redis()
    r.delete(*r.keys(f"lab:run:{run.id}:*"), stream_key(run.id))


def test_after_redis_lost_a_runs_log_new_events_carry_on_after_the_stored_ones():
    run = _run()
    log_open(run.id)
    assert _append(run, "received", "task-a") == (1, 1)
    assert _append(run, "received", "task-a") == (2, 2)  # a redelivered copy
    assert _append(run, "received", "task-b") == (3, 1)
    # what the recorder stored before Redis went
    events_store([LabEvent.from_dict(e) for e in stream_read(run.id)])
    _redis_loses(run)

    assert _append(run, "started", "task-a", copy=2) == (4, 2)
    assert _append(run, "received", "task-a") == (5, 3)  # copy 3, not a second copy 1
    assert _append(run, "received", "task-b") == (6, 2)
    assert app_redis().get(reset_key(run.id)) == "3"
    # The live counters carry on from the stored tallies too.
    last = stream_read(run.id)[-1]["counts"]
    assert (last["receipts"], last["duplicates"], last["executions"]) == (5, 3, 1)


def test_a_fresh_run_numbers_from_one_without_reading_the_database(django_assert_num_queries):
    run = _run()
    log_open(run.id)
    with django_assert_num_queries(0):
        assert _append(run, "received", "task-a") == (1, 1)
    assert app_redis().get(reset_key(run.id)) is None

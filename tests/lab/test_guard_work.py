"""The guarded lab task on the private test Redis: copies of the same work are turned away
whatever their Celery task id, and different work is never turned away.

The task body runs through Celery's own `apply` (no broker); only the lab's event recording
is replaced by a list, because these tests are about the guard, not the event path."""

from __future__ import annotations

import uuid

import pytest

from teachlab.lab.worker import events
from teachlab.lab.worker.celery_app import lane_app
from teachlab.lab.worker.tasks import SUPPRESSED, TASK_EARLY, LabBodyFailed


@pytest.fixture
def recorded(monkeypatch) -> list[str]:
    kinds: list[str] = []
    monkeypatch.setattr(events, "event_from_task", lambda task, kind, **_: kinds.append(kind))
    return kinds


def _work(*, run: str, index: int, task_id: str, **kwargs):
    task = lane_app("redis-short").tasks[TASK_EARLY]
    return task.apply(
        kwargs={"run": run, "index": index, "guard_on": True, **kwargs}, task_id=task_id
    )


def test_a_copy_of_the_same_work_under_a_new_task_id_is_suppressed(recorded):
    run = uuid.uuid4().hex
    first = _work(run=run, index=0, task_id=uuid.uuid4().hex)
    second = _work(run=run, index=0, task_id=uuid.uuid4().hex)
    assert first.get() == "done"
    assert second.get() == SUPPRESSED
    assert recorded == ["suppressed"]


def test_other_work_under_the_same_task_id_is_not_suppressed(recorded):
    run = uuid.uuid4().hex
    same_id = uuid.uuid4().hex
    assert _work(run=run, index=0, task_id=same_id).get() == "done"
    assert _work(run=run, index=1, task_id=same_id).get() == "done"
    assert _work(run=uuid.uuid4().hex, index=0, task_id=same_id).get() == "done"
    assert recorded == []


def test_a_failed_body_lets_a_new_attempt_under_another_id_do_the_work(recorded):
    run = uuid.uuid4().hex
    failed = _work(run=run, index=0, task_id=uuid.uuid4().hex, fail=1)
    assert isinstance(failed.result, LabBodyFailed)
    assert _work(run=run, index=0, task_id=uuid.uuid4().hex, fail=1).get() == "done"
    assert _work(run=run, index=0, task_id=uuid.uuid4().hex, fail=1).get() == SUPPRESSED
    assert recorded == ["suppressed"]


def test_without_the_guard_every_copy_runs(recorded):
    run = uuid.uuid4().hex
    for _ in range(2):
        assert _work(run=run, index=0, task_id=uuid.uuid4().hex, guard_on=False).get() == "done"
    assert recorded == []

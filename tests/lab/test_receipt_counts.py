"""The learner's counters, from the live tallies and from stored events, on runs where
receipts, executions and first deliveries all differ, so no counter can stand in for another."""

from __future__ import annotations

import pytest

from lessons.models import Learner
from teachlab.lab.eventlog.runstate import totals
from teachlab.lab.models import Run, RunEvent
from teachlab.lab.runs.reading import run_events, run_summary


def test_counters_from_raw_tallies_keep_receipts_executions_and_duplicates_apart():
    raw = {"received": 7, "first": 3, "started": 4, "suppressed": 1, "failed": 2}
    raw |= {"revoked": 1, "finished": 3}
    assert totals(raw, 3) == {
        "tasks": 3,
        "receipts": 7,
        "executions": 3,
        "suppressed": 1,
        "duplicates": 4,
        "amplification": 1.0,
        "failed": 2,
        "revoked": 1,
        "finished": 3,
    }


def test_counters_with_nothing_yet_are_zero_and_no_tasks_has_no_amplification():
    assert totals({}, 0) == dict.fromkeys(
        ["receipts", "executions", "suppressed", "duplicates", "failed", "revoked", "finished"], 0
    ) | {"tasks": 0, "amplification": 0.0}
    assert totals({"received": "2", "first": "2", "started": "1"}, 3)["amplification"] == 0.333


def _event(run, seq, kind, task, index, copy=1):
    return RunEvent(
        run=run, seq=seq, kind=kind, task_id=task, index=index, copy=copy, at=1000.0 + seq, t=seq
    )


@pytest.fixture
def held_run(db) -> Run:
    """Task a: received three times (a storm), started once, the other copies revoked.
    Task b: received once, never started (still held by a worker)."""
    run = Run.objects.create(learner=Learner.objects.create(), lane="redis-short")
    run.task_ids = ["a", "b"]
    run.save()
    rows = [
        _event(run, 1, "received", "a", 0, 1),
        _event(run, 2, "received", "b", 1, 1),
        _event(run, 3, "received", "a", 0, 2),
        _event(run, 4, "received", "a", 0, 3),
        _event(run, 5, "started", "a", 0, 3),
        _event(run, 6, "finished", "a", 0, 3),
        _event(run, 7, "revoked", "a", 0, 1),
        _event(run, 8, "revoked", "a", 0, 2),
    ]
    RunEvent.objects.bulk_create(rows)
    return run


def test_the_summary_counts_deliveries_as_receipts_not_starts(held_run):
    summary = run_summary(held_run)
    assert summary["receipts"] == 4
    assert summary["executions"] == 1
    assert summary["duplicates"] == 2
    assert summary["revoked"] == 2
    assert summary["per_task"]["a"]["received"] == 3
    assert summary["per_task"]["a"]["executed"] == 1
    assert summary["per_task"]["a"]["revoked"] == 2
    assert summary["per_task"]["b"]["received"] == 1
    assert summary["per_task"]["b"]["executed"] == 0


def test_each_stored_event_carries_the_counters_as_of_that_event(held_run):
    found = run_events(held_run)
    assert [e["counts"]["receipts"] for e in found] == [1, 2, 3, 4, 4, 4, 4, 4]
    assert [e["counts"]["executions"] for e in found] == [0, 0, 0, 0, 1, 1, 1, 1]
    later = run_events(held_run, after_seq=4)
    assert [e["seq"] for e in later] == [5, 6, 7, 8]
    assert later[0]["counts"] == found[4]["counts"]

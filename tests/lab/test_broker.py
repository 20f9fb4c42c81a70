"""The broker panel's data: unacked entries ageing toward the timeout, restores marked."""

import pytest

from teachlab.lab.eventlog.broker import run_tag

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def test_a_waiting_countdown_sits_in_unacked_and_each_restore_is_marked(fired_runs):
    tag = run_tag(fired_runs["short25"]["run"])
    seen = [
        (snap["at"], entry)
        for snap in fired_runs["broker_snapshots"]
        for entry in snap["unacked"]
        if entry["run_tag"] == tag
    ]
    assert seen, "the 25 s countdown never showed in unacked"
    # It ages toward the 10 s timeout as a fraction the panel draws as a progress bar...
    assert max(entry["fraction"] for _, entry in seen) >= 0.9
    assert all(0 <= entry["fraction"] <= 1 for _, entry in seen)
    # ...then goes back and is delivered again: marked as a restore, twice before it runs.
    assert max(entry["restores"] for _, entry in seen) >= 2
    assert any(entry["redelivered"] for _, entry in seen)
    restored = [r for snap in fired_runs["broker_snapshots"] for r in snap["restored"]]
    task_id = next(iter(fired_runs["short25"]["per_task"]))
    assert sum(1 for r in restored if r["task_id"] == task_id) >= 2


def test_broker_snapshots_never_show_a_run_id(fired_runs):
    run_id = fired_runs["short25"]["run"]
    for snap in fired_runs["broker_snapshots"]:
        assert run_id not in repr(snap)

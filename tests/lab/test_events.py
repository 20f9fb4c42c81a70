"""Every delivery reaches the run's log (its Redis Stream) as its own event, in seq order,
live, and the log ends with the run's summary."""

import time

import pytest

from teachlab.lab.eventlog.labevent import DONE
from teachlab.lab.eventlog.stream import stream_read
from tests.lab.conftest import run_id_from

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def _follow(run_id: str, until: float) -> list[dict]:
    got, last = [], "0-0"
    while time.time() < until:
        for event in stream_read(run_id, after=last, block=500):
            last = event["id"]
            got.append(event)
            if event["kind"] == DONE:
                return got
    return got


def test_a_redelivered_copy_arrives_live_in_the_run_log_as_its_own_event(lab_stack):
    proc = lab_stack.lab_popen(
        "run", "--lane", "redis-short", "--countdown", "12", "--json", "--learner", "test-events"
    )
    run_id = run_id_from(proc)  # the summary goes to stdout
    entries = _follow(run_id, until=time.time() + 30)
    proc.communicate(timeout=30)

    events = [e for e in entries if e["kind"] != DONE]
    received = [e for e in events if e["kind"] == "received"]
    assert [e["copy"] for e in received] == [1, 2], events
    again = received[1]
    assert again["redelivered"] is True
    assert 9.5 <= again["since_publish"] <= 12, again
    assert again["counts"]["receipts"] == 2
    finished = [e for e in events if e["kind"] == "finished"]
    assert sorted(e["copy"] for e in finished) == [1, 2]
    # One sequence per run, in the order the log holds them: no gaps, no crossings.
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert all(e["run"] == run_id for e in events)
    assert entries[-1]["kind"] == DONE
    assert entries[-1]["summary"]["receipts"] == 2

"""The memory steps of noeviction-loses-popped on the session's own noeviction Redis
(tests/stack.py starts it with teachlab.lab.runs.lanetable.NOEVICTION_SERVER_ARGS): filling leaves the
server refusing writes but still serving BRPOP, freeing lets it take writes again, and a lane
on the shared broker is never filled."""

from __future__ import annotations

import json

import pytest
import redis

from teachlab.lab.experiments.memory import (
    memory_fill,
    memory_free,
    queued_now,
    unacked_writes_refused,
)
from teachlab.lab.experiments.metrics import run_metric
from teachlab.lab.experiments.observe import observation_from_events
from teachlab.lab.runs.errors import LabError
from teachlab.lab.runs.lanes import lane_get

LANE = "noeviction-memory-test"


@pytest.fixture
def tight(settings):
    """A lane of the test's own on redis-noeviction's server (maxmemory is the server's), in a
    database no worker reads: in the full suite lab_stack runs a worker for redis-noeviction,
    which popped the message this test expects to find waiting (and flushdb would have wiped
    that worker's keys)."""
    settings.LAB_EXTRA_LANES = [
        *settings.LAB_EXTRA_LANES,
        {"name": LANE, "broker": "redis", "server": "noeviction", "db": 1, "listed": False},
    ]
    lane = lane_get(LANE)
    client = redis.Redis.from_url(lane.broker_url)
    client.flushdb()
    yield lane, client
    memory_free(lane=LANE)
    client.flushdb()


def _message(task_id: str) -> str:
    return json.dumps({"headers": {"id": task_id}, "body": "x"})


def test_a_filled_noeviction_server_refuses_writes_and_the_zadd_but_still_pops(tight):
    lane, client = tight
    client.lpush(lane.queue, _message("waiting"))
    before = unacked_writes_refused(lane=LANE)

    found = memory_fill(lane=LANE)

    assert found["over_by"] > 64 * 1024  # not a margin one popped message would free
    assert queued_now(lane=LANE, task_ids=["waiting"]) == 1
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        client.lpush(lane.queue, _message("refused"))
    popped = client.brpop([lane.queue], timeout=1)  # no denyoom flag: still served
    assert popped is not None and json.loads(popped[1])["headers"]["id"] == "waiting"
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        client.zadd("unacked_index", {"tag": 1.0})
    assert unacked_writes_refused(lane=LANE) == before + 1

    assert memory_free(lane=LANE) == found["fillers"]
    client.zadd("unacked_index", {"tag": 1.0})  # takes writes again


def test_the_shared_broker_is_never_filled():
    with pytest.raises(LabError, match="not set to a maxmemory with noeviction"):
        memory_fill(lane="redis-short")


def test_the_run_metrics_read_what_the_memory_steps_saw():
    observation = observation_from_events(task_ids=["a"], params={}, events=[])
    assert run_metric(observation=observation, what="unacked_writes_refused") is None
    observation.broker = {"queued_at_limit": 1, "unacked_writes_refused": 2}
    assert run_metric(observation=observation, what="queued_at_limit") == 1
    assert run_metric(observation=observation, what="unacked_writes_refused") == 2


def test_a_run_stopped_after_the_fill_still_frees_memory_and_counts_its_refusals(tight):
    from teachlab.lab.experiments.playing import ExperimentRun
    from teachlab.lab.experiments.steps import leave_no_trace

    lane, client = tight
    state = ExperimentRun(spec={"name": "full", "lane": LANE, "steps": []})
    state.broker["filled"] = memory_fill(lane=LANE)
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        client.zadd("unacked_index", {"tag": 1.0})

    leave_no_trace(state)  # what the runner does when a step failed after the fill

    assert state.broker["freed"] and state.broker["unacked_writes_refused"] == 1
    client.set("takes-writes-again", "1")

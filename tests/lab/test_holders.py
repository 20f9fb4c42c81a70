"""The run page's panel "What each worker holds" counts copies, not task ids: a worker holding
two deliveries of one task reports both, through the real registry on the test Redis."""

from __future__ import annotations

import os
import socket
import time

import psutil
import pytest

from teachlab.lab.live.panels import holders_html, holders_rows
from teachlab.lab.runs.store import app_redis
from teachlab.lab.worker import events
from teachlab.lab.worker.heartbeat import _write
from teachlab.lab.worker.workers import REGISTRY, workers_list

NAME = "holders-test-1"
LANE = "holders-test"


@pytest.fixture
def holding_two_copies_of_one_task():
    """This test process registers as a worker holding two receipts of task t1 and one of t2."""
    saved = dict(events.held)
    events.held.clear()
    events.held.update({"receipt-a": "t1", "receipt-b": "t1", "receipt-c": "t2"})
    record = {
        "name": NAME,
        "lane": LANE,
        "hostname": f"{NAME}@{socket.gethostname()}",
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "created": psutil.Process().create_time(),
        "started_at": time.time(),
        "state": "running",
    }
    try:
        _write(app_redis(), record)
        yield
    finally:
        events.held.clear()
        events.held.update(saved)
        app_redis().hdel(REGISTRY, NAME)


def _ours() -> dict:
    return next(w for w in workers_list() if w["name"] == NAME)


def test_a_worker_reports_each_copy_it_holds_not_each_task(holding_two_copies_of_one_task):
    worker = _ours()
    assert worker["alive"] and worker["held"] == 3
    assert sorted(worker["held_ids"]) == ["t1", "t1", "t2"]


def test_two_copies_on_one_worker_count_two_and_explain_the_gap_to_redis(
    holding_two_copies_of_one_task,
):
    rows = holders_rows(workers_list(), lane=LANE, task_ids=frozenset({"t1"}))
    assert rows == ((NAME, True, 2),)
    html = holders_html(rows, unacked=1)
    assert 'data-held="2"' in html
    assert "Why more copies are held than Redis lists" in html
    assert "2 copies in workers, 1 entry in Redis" in html
    # When Redis lists as many as the workers hold, there is nothing to explain.
    assert "Why more copies" not in holders_html(rows, unacked=2)

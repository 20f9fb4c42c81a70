"""Drill: a lab worker holding countdowns is SIGKILLed from outside the lab (as `kill -9` or
the OOM killer would; not the lab's crash button), under teachlab.core.devstack's restart loop.

Lost: nothing the app could keep. The dead worker's copies stay in kombu's `unacked` hash
until the visibility timeout, then the broker hands them out again; the receipts stored before
the kill stay. Checked: the run page names the worker and how many deliveries it took with
it, the supervisor starts a new worker process within 5 s (the time until that worker serves
is measured and printed: its own start is CPU-bound), and the run settles with every delivery
the broker made stored once (independent count through MONITOR).
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter

import pytest

from tests.drills.stack import (
    DeliveryCount,
    EventLoopThread,
    RunWatcher,
    fire_run,
    run_events,
    run_status,
    run_task_ids,
    wait_until,
)
from tests.support.http import Visitor

pytestmark = [pytest.mark.broker, pytest.mark.slow]

TASKS = 6
COUNTDOWN = 7  # shorter than redis-short's 10 s timeout: only the victim's copies come back
BACK_WITHIN = 5.0  # seconds from the kill to the supervisor's new worker process (issue 14)
# Seconds from the kill to that worker serving: its own start (imports, about 1.4 s of CPU)
# is what takes the time, 2-5 s on an idle 2-core machine and more under a loaded CI run.
SERVING_WITHIN = 30.0


def test_a_worker_killed_from_outside_is_named_on_the_run_page_and_back_within_5_s(drill_stack):
    server = drill_stack.server
    count = DeliveryCount(drill_stack.redis.url, db=1).resume()
    visitor = Visitor()
    run = fire_run(server.url, visitor, count=TASKS, countdown=COUNTDOWN)
    fired = time.monotonic()
    loop = EventLoopThread()
    watchers = [RunWatcher(server.url, run, visitor.cookie("sessionid")) for _ in range(2)]
    for w in watchers:
        loop.loop.call_soon_threadsafe(w.start)
    try:
        wait_until(
            lambda: sum(1 for e in run_events(run) if e[1] == "received") == TASKS,
            timeout=30,
            what="every task received",
        )
        holders = Counter(e[3] for e in _receipts(run))
        hostname, held = holders.most_common(1)[0]
        name = hostname.split("@")[0]
        child = drill_stack.child(name)
        old_pid = child.proc.pid

        assert time.monotonic() - fired < COUNTDOWN - 1, "too slow to kill before the tasks ran"
        os.killpg(old_pid, signal.SIGKILL)
        killed_at = time.monotonic()
        wait_until(lambda: child.proc.pid != old_pid, timeout=BACK_WITHIN, every=0.05,
                   what="the supervisor starting the worker again")  # fmt: skip
        spawned = time.monotonic() - killed_at

        def serving():
            return any(
                w["name"] == name and w["alive"] and w["pid"] == child.proc.pid
                for w in drill_stack.workers()
            )

        assert spawned <= BACK_WITHIN
        wait_until(serving, timeout=SERVING_WITHIN, every=0.05, what="the new worker serving")
        back = time.monotonic() - killed_at
        print(f"\nworker {name}: new process after {spawned:.2f} s, serving after {back:.2f} s")

        def page_says_so():
            return all(
                any(name in f and "supervisor has started it again" in f for f in w.losses)
                for w in watchers
            )

        wait_until(page_says_so, timeout=10, what="the run page naming the killed worker")
        notice = watchers[0].losses[-1]
        assert f"{held} deliver" in notice, notice

        wait_until(lambda: run_status(run) == "done", timeout=40, what="the run settling")
        wait_until(lambda: all(w.done for w in watchers), timeout=15, what="pages told")
    finally:
        for w in watchers:
            loop.call(w.close())
        loop.close()
        count.close()

    events = run_events(run)
    task_ids = run_task_ids(run)
    delivered = count.per_task(task_ids)
    stored = Counter(e[2] for e in events if e[1] == "received")
    # The victim's copies came back after the timeout: delivered twice, stored twice.
    assert sum(delivered.values()) == TASKS + held
    assert dict(delivered) == dict(stored)
    seqs = [e[0] for e in events]
    assert seqs == list(range(1, len(seqs) + 1))
    # Each task ran once: the victim died before its copies were due.
    assert Counter(e[2] for e in events if e[1] == "finished") == Counter(
        dict.fromkeys(task_ids, 1)
    )
    for w in watchers:
        assert not w.doubled


def _receipts(run: str):
    from tests.drills.stack import live_rows

    return live_rows(
        "SELECT seq, kind, task_id, worker FROM lab_runevent WHERE run_id = ? AND kind = ?",
        (run, "received"),
    )

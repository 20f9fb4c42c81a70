"""Nothing the broker delivers is lost from the stored history, and nothing is stored twice,
when a worker is SIGKILLed mid-burst or when the recorder itself is killed and restarted.

The independent count: kombu's Redis transport writes every delivery, restored copies
included, to the `unacked` hash with one HSET (kombu 5.7, `kombu.transport.redis.QoS.append`,
the only HSET on that key). Redis's MONITOR shows each command with its payload, which names
the task id, so a thread watching MONITOR counts deliveries per task without the lab's code.
"""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from collections import Counter

import pytest
import redis

from tests.lab.conftest import run_id_from
from tests.lab.workerpool import RECORDER
from tests.stack import manage

pytestmark = [pytest.mark.broker, pytest.mark.slow]

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
BURST = 500


class DeliveryCounter:
    """Counts HSETs on a lane database's `unacked` hash, per task id found in the payload."""

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url)
        self.db = self.client.connection_pool.connection_kwargs.get("db", 0)
        self.hsets: list[set[str]] = []
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        with self.client.monitor() as feed:
            self.ready.set()
            for cmd in feed.listen():
                if self.stop.is_set():
                    return
                text = cmd.get("command", "")
                if int(cmd.get("db", -1)) == self.db and text.lower().startswith("hset unacked "):
                    self.hsets.append(set(UUID.findall(text)))

    def __enter__(self) -> DeliveryCounter:
        self.thread.start()
        assert self.ready.wait(5), "MONITOR did not start"
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.client.ping()  # one more command, so listen() yields and sees the stop
        self.thread.join(timeout=5)

    def per_task(self, task_ids: list[str]) -> Counter:
        wanted = set(task_ids)
        counts: Counter = Counter()
        for ids in self.hsets:
            for task_id in ids & wanted:
                counts[task_id] += 1
        return counts


STORED = """
import json
from collections import Counter
from teachlab.lab.models import Run, RunEvent
run = Run.objects.get(id={run_id!r})
rows = list(RunEvent.objects.filter(run=run).values_list("seq", "kind", "task_id", "copy"))
received = [r for r in rows if r[1] == RunEvent.Kind.RECEIVED]
print(json.dumps({{
    "status": run.status,
    "task_ids": run.task_ids,
    "rows": len(rows),
    "seqs": len({{r[0] for r in rows}}),
    "max_seq": max((r[0] for r in rows), default=0),
    "received": Counter(r[2] for r in received),
    "copies": {{t: sorted(c for _, _, tid, c in received if tid == t) for t in {{r[2] for r in received}}}},
}}))
"""


def _stored(run_id: str) -> dict:
    out = manage("shell", "-c", STORED.format(run_id=run_id)).stdout
    return json.loads(out.strip().splitlines()[-1])


def _stream_entries(run_id: str) -> dict[int, str]:
    """seq -> kind of every event entry in the run's log (the done marker excluded)."""
    from teachlab.lab.eventlog.labevent import DONE, seq_of
    from teachlab.lab.eventlog.stream import stream_key
    from teachlab.lab.runs.store import app_redis

    entries = app_redis().xrange(stream_key(run_id))
    return {
        seq_of(entry_id): fields.get("k", "")
        for entry_id, fields in entries
        if fields.get("k") != DONE
    }


def _stream_length(run_id: str) -> int:
    return len(_stream_entries(run_id))


def _fire(lab_stack, learner: str):
    proc = lab_stack.lab_popen(
        "run", "--lane", "redis-short", "--count", str(BURST), "--countdown", "6",
        "--json", "--learner", learner, "--timeout", "90",
    )  # fmt: skip
    return proc, run_id_from(proc)


def _kill_group(pid: int) -> None:
    os.killpg(pid, signal.SIGKILL)


def _settled_history(run_id: str, *, timeout: float = 60) -> dict:
    """The stored history once the recorder has caught up with the run's log."""
    deadline = time.monotonic() + timeout
    while True:
        stored = _stored(run_id)
        if stored["status"] != "running" and stored["rows"] >= _stream_length(run_id):
            return stored
        if time.monotonic() > deadline:
            return stored
        time.sleep(1)


def _assert_every_delivery_stored_once(stored: dict, delivered: Counter) -> None:
    assert len(stored["task_ids"]) == BURST
    assert sum(delivered.values()) >= BURST, "the independent count saw too little"
    # Every delivery the broker made is a stored receipt of the same task, no more, no fewer.
    differ = {
        t: (delivered[t], stored["received"].get(t, 0))
        for t in stored["task_ids"]
        if delivered[t] != stored["received"].get(t, 0)
    }
    assert not differ, f"(broker, stored) receipts differ for {len(differ)} tasks: {differ}"
    # Nothing doubled: one row per seq, seqs without gaps, copies numbered 1..n per task.
    assert stored["rows"] == stored["seqs"] == stored["max_seq"]
    bad = {t: c for t, c in stored["copies"].items() if c != list(range(1, len(c) + 1))}
    assert not bad, bad


def test_a_worker_sigkilled_mid_burst_loses_no_delivery_from_the_stored_history(lab_stack):
    from teachlab.lab.runs.lanes import lane_get

    lane = lane_get("redis-short")
    with DeliveryCounter(lane.broker_url) as counter:
        proc, run_id = _fire(lab_stack, "test-noloss-worker")
        time.sleep(2)  # the burst is in: both workers hold countdowns
        victim = "redis-short-1"
        _kill_group(lab_stack.workers.procs[victim].pid)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        stored = _settled_history(run_id)
    delivered = counter.per_task(stored["task_ids"])
    # The kill stranded the victim's countdowns until the timeout; they came back as copies.
    assert sum(delivered.values()) > BURST, "the kill stranded nothing: the test proved nothing"
    _assert_every_delivery_stored_once(stored, delivered)
    lab_stack.workers.wait_alive([victim], timeout=30)


def test_the_recorder_killed_and_restarted_mid_burst_stores_everything_once(lab_stack):
    from teachlab.lab.runs.lanes import lane_get

    lane = lane_get("redis-short")
    before = lab_stack.workers.restarts[RECORDER]
    with DeliveryCounter(lane.broker_url) as counter:
        proc, run_id = _fire(lab_stack, "test-noloss-recorder")
        time.sleep(1)  # receipts arriving
        _kill_group(lab_stack.workers.procs[RECORDER].pid)
        time.sleep(5.5)  # the restarted recorder works; then the executions burst at 6 s
        _kill_group(lab_stack.workers.procs[RECORDER].pid)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        stored = _settled_history(run_id)
    assert lab_stack.workers.restarts[RECORDER] >= before + 2
    delivered = counter.per_task(stored["task_ids"])
    _assert_every_delivery_stored_once(stored, delivered)
    # Every event in the log, not only receipts, reached the database.
    logged = _stream_entries(run_id)
    missing = {seq: kind for seq, kind in logged.items() if seq > stored["max_seq"]}
    assert stored["rows"] == len(logged), f"not stored: {missing}"

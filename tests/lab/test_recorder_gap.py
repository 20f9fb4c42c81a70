"""The recorder's pace during a burst (teachlab/lab/eventlog/recorder.py, GAP_SECONDS): reads that find
entries are at least the gap apart, so a burst is stored in a few big batches, and every entry
is still stored exactly once. Real Redis (the tests' private one) and the test database."""

from __future__ import annotations

import threading
import time

import pytest

from lessons.models import Learner
from teachlab.lab.eventlog.recorder import Recorder, recorder_loop
from teachlab.lab.eventlog.stream import entry_append, log_open
from teachlab.lab.models import Run

pytestmark = pytest.mark.django_db(transaction=True)


def _burst(run: Run, *, entries: int, every: float) -> None:
    for i in range(entries):
        task_id = f"task-{i % 5}"
        fields = {"k": "received", "ti": task_id, "i": str(i % 5), "w": "w1@test", "r": "0",
                  "a": repr(time.time()), "n_tasks": "5"}  # fmt: skip
        entry_append(run_id=run.id, kind="received", task_id=task_id, known_copy=0, fields=fields)
        time.sleep(every)


def _record_burst(gap: float) -> tuple[Run, Recorder]:
    run = Run.objects.create(
        learner=Learner.objects.create(),
        lane="redis-short",
        params={"count": 5},
        task_ids=[f"task-{i}" for i in range(5)],
        visibility_timeout=10,
        fired_at=time.time(),
    )
    log_open(run.id)
    recorder = Recorder(f"gap-test-{run.id}", runs=[run.id])
    stop = threading.Event()
    thread = threading.Thread(
        target=recorder_loop, kwargs={"stop": stop, "gap": gap, "recorder": recorder}
    )
    thread.start()
    try:
        _burst(run, entries=120, every=0.01)  # about 1.3 s of entries
        deadline = time.monotonic() + 10
        while run.events.count() < 120 and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop.set()
        thread.join(timeout=10)
    return run, recorder


def test_a_burst_is_stored_in_one_batch_per_gap_and_every_entry_once():
    run, recorder = _record_burst(gap=0.4)
    seqs = list(run.events.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, 121))
    # About 1.3 s of entries at one read per 0.4 s: four or five batches, six at most.
    assert 2 <= recorder.batches <= 6, recorder.batches


def test_without_a_gap_the_same_burst_takes_many_small_batches():
    """The contrast that shows the gap is what makes the batches few."""
    run, recorder = _record_burst(gap=0)
    assert run.events.count() == 120
    assert recorder.batches > 12, recorder.batches

"""Worker controls on real processes: a crash is an immediate kill, a warm shutdown hands the
held countdown to another worker at once; the supervisor starts exited workers again."""

import json
import time

import pytest

from teachlab.lab.worker.workers import worker_crash, worker_shutdown, workers_list

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def _worker(name: str) -> dict:
    return next(w for w in workers_list() if w["name"] == name)


def _wait(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_a_crashed_worker_shows_dead_at_once_and_the_supervisor_starts_it_again(lab_stack):
    before = _worker("redis-long-2")
    assert before["alive"]
    worker_crash(name="redis-long-2")
    assert _wait(lambda: not _worker("redis-long-2")["alive"], 3)
    assert _wait(
        lambda: (
            _worker("redis-long-2")["alive"] and _worker("redis-long-2")["pid"] != before["pid"]
        ),
        30,
    ), lab_stack.workers.log_tail("redis-long-2")
    assert lab_stack.workers.restarts["redis-long-2"] >= 1


def _holder(lane: str) -> str | None:
    holding = [w for w in workers_list() if w["lane"] == lane and w["held"] and w["alive"]]
    return holding[0]["name"] if holding else None


def test_a_crash_strands_the_held_countdown_until_the_visibility_timeout(lab_stack):
    proc = lab_stack.lab_popen(
        "run", "--lane", "redis-short", "--countdown", "5", "--json", "--learner", "test-crash"
    )
    assert _wait(lambda: _holder("redis-short") is not None, 10)
    holder = _holder("redis-short")
    worker_crash(name=holder)
    out, _ = proc.communicate(timeout=60)
    summary = json.loads(out)
    (task,) = summary["per_task"].values()
    # Nobody else sees it until the 10 s timeout runs out, then it runs at once: late.
    assert task["received"] == 2, task
    assert 9.5 <= task["received_t"][1] <= 12.5, task
    assert task["executed"] == 1, task
    assert task["started_t"][0] >= 9.5, task
    # The crashed copy never reports; once the next copy arrived it counts as lost.
    assert summary["status"] == "done"
    lab_stack.workers.wait_alive([holder], timeout=30)


def test_warm_shutdown_hands_a_held_countdown_to_the_other_worker_at_once(lab_stack):
    proc = lab_stack.lab_popen(
        "run", "--lane", "redis-short", "--countdown", "8", "--json", "--learner", "test-warm"
    )
    holder = None

    def someone_holds() -> bool:
        nonlocal holder
        holding = [w for w in workers_list() if w["lane"] == "redis-short" and w["held"]]
        holder = holding[0]["name"] if holding else None
        return holder is not None

    assert _wait(someone_holds, 10)
    worker_shutdown(name=holder)
    out, _ = proc.communicate(timeout=60)
    summary = json.loads(out)
    (task,) = summary["per_task"].values()
    assert task["received"] == 2, task
    assert task["executed"] == 1, task  # ran once, by the worker that took it over
    # Handed over within a moment of the shutdown, not after the 10 s visibility timeout.
    assert task["received_t"][1] < 5, task
    assert task["due_t"] - 0.05 <= task["started_t"][0] <= task["due_t"] + 2, task
    assert task["requeued"] == 1, task  # the copy it gave back is accounted for...
    assert summary["status"] == "done"  # ...so the run settles
    lab_stack.workers.wait_alive([holder], timeout=30)

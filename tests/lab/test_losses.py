"""Which of a run's deliveries a dead worker took with it (the run page's notice)."""

from __future__ import annotations

from teachlab.lab.eventlog.labevent import LabEvent
from teachlab.lab.eventlog.runstate import RunState
from teachlab.lab.live.losses import worker_losses


def _event(kind: str, task: str, copy: int, worker: str = "w1@h", at: float = 100.0):
    return LabEvent(run="r", kind=kind, task_id=task, copy=copy, worker=worker, at=at)


def _worker(hostname: str, *, alive: bool, started_at: float) -> dict:
    return {"hostname": hostname, "alive": alive, "started_at": started_at}


EVENTS = RunState().apply_all(
    [
        _event("received", "a", 1),
        _event("received", "b", 1),
        _event("received", "c", 1),
        _event("finished", "c", 1),  # settled before the kill: not lost
        _event("received", "d", 1, worker="w2@h"),
    ]
)


def test_a_dead_worker_is_named_with_the_deliveries_it_held_unsettled():
    workers = [
        _worker("w1@h", alive=False, started_at=50.0),
        _worker("w2@h", alive=True, started_at=50.0),
    ]
    assert worker_losses(EVENTS, workers) == [{"worker": "w1@h", "held": 2, "back": False}]


def test_a_worker_started_again_after_the_receipts_counts_as_back_and_still_lost_them():
    workers = [
        _worker("w1@h", alive=True, started_at=120.0),
        _worker("w2@h", alive=True, started_at=50.0),
    ]
    assert worker_losses(EVENTS, workers) == [{"worker": "w1@h", "held": 2, "back": True}]


def test_live_workers_and_workers_the_registry_does_not_list_are_not_judged():
    assert worker_losses(EVENTS, [_worker("w1@h", alive=True, started_at=50.0)]) == []

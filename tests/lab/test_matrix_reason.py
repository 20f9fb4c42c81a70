"""A combination whose workers exit at start: each experiment's record names its own lanes'
workers and their own words, not the first worker of any lane that gave up (review9 M3)."""

from __future__ import annotations

from pathlib import Path

from teachlab.core.devstack import Child
from teachlab.lab.experiments.catalog import experiment_get
from teachlab.lab.matrix.processes import Supervised, lanes_exited, own_reason

REFUSED = "redis.exceptions.ResponseError: value is not an integer or out of range"


def _child(logs: Path, name: str, restarts: int, words: str) -> Child:
    (logs / f"{name}.log").write_text(f"2026-12-05 INFO start\n{words}\n")
    return Child(name, ["true"], logs=logs, restarts=restarts)


def test_the_record_names_the_experiments_own_lane_and_its_workers_words(tmp_path: Path):
    other = _child(tmp_path, "redis-threads-cancel-1", 3, "KeyError: 'other lane'")
    own = _child(tmp_path, "redis-versions-1", 4, REFUSED)
    supervised = Supervised(
        [other, own],
        lane_of={"redis-threads-cancel-1": "redis-threads-cancel", "redis-versions-1": "redis-versions"},
    )  # fmt: skip
    experiment = experiment_get(slug="sweep-refused-on-redis-6-0")
    assert experiment.lanes == ["redis-versions"]
    first = "redis-threads-cancel-1 exited 4 times: KeyError: 'other lane'"
    reason = own_reason(supervised, experiment, first)
    assert reason == f"redis-versions-1 exited 4 times: {REFUSED}"
    assert "redis-threads-cancel" not in reason
    assert lanes_exited(supervised, ["redis-prefork"]) == ""


def test_a_lane_whose_workers_had_not_exited_says_so_and_whose_did(tmp_path: Path):
    other = _child(tmp_path, "redis-threads-cancel-1", 3, "KeyError: 'other lane'")
    supervised = Supervised([other], lane_of={"redis-threads-cancel-1": "redis-threads-cancel"})
    experiment = experiment_get(slug="sweep-refused-on-redis-6-0")
    reason = own_reason(supervised, experiment, "redis-threads-cancel-1 exited 4 times: x")
    assert reason.startswith("redis-threads-cancel-1 exited 4 times: x (another lane's worker")
    assert "redis-versions had not exited" in reason

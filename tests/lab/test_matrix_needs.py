"""`lab matrix` skips an experiment on a combination whose lock pins miss its `needs`, and
records why, without starting a broker or workers for it."""

from __future__ import annotations

from pathlib import Path

from teachlab.lab.experiments.catalog import experiment_get
from teachlab.lab.experiments.needs import needs_unmet
from teachlab.lab.matrix.envs import lock_pins
from teachlab.lab.matrix.runner import RABBIT_ONLY, Combination, _combination_run, skip_reason

WHY = "the 1 s sweep is kombu's unacked_restore_interval"


def test_a_range_the_pins_miss_names_the_package_the_version_and_why():
    needs = {"kombu": ">=5.7", "why": WHY}
    assert needs_unmet(needs, {"celery": "5.7.0", "kombu": "5.7.0"}) == ""
    reason = needs_unmet(needs, {"celery": "5.5.3", "kombu": "5.5.4"})
    assert reason == f"needs kombu >=5.7 (this one has 5.5.4): {WHY}"
    assert needs_unmet({}, {"kombu": "5.3.7"}) == ""
    assert "celery >=5.7 (this one has none)" in needs_unmet({"celery": ">=5.7", "why": WHY}, {})


def test_the_lock_files_decide_which_series_skip_a_kombu_5_7_experiment():
    experiment = experiment_get(slug="countdown-beyond-timeout")
    assert experiment.needs["kombu"] == ">=5.7"
    skipped = {
        series
        for series in ("5.3", "5.4", "5.5", "5.6", "5.7")
        if skip_reason(experiment, on_redis=True, pins=lock_pins(series))
    }
    assert skipped == {"5.3", "5.4", "5.5", "5.6"}
    assert skip_reason(experiment, on_redis=False, pins=lock_pins("5.7")) == RABBIT_ONLY


def test_a_skipped_combination_starts_nothing_and_records_the_pinned_versions(tmp_path: Path):
    experiment = experiment_get(slug="countdown-beyond-timeout")
    said = []

    def execute(*args):
        raise AssertionError("no experiment may run on a combination it skips")

    found = _combination_run(
        combination=Combination("5.5", "6.0"),
        experiments=[experiment],
        redis_lanes={experiment.slug: True},
        learner=None,
        execute=execute,
        logs=tmp_path,
        say=said.append,
        estimate=lambda seconds: "0:00",
    )
    assert [r["verdict"] for r in found] == ["skipped"]
    record = found[0]
    assert record["versions"] == {"celery": "5.5.3", "kombu": "5.5.4", "redis-py": "5.2.1"}
    assert record["reason"].startswith("needs kombu >=5.7 (this one has 5.5.4): ")
    assert "unacked_restore_interval" in record["reason"]
    assert record["checks"] == [] and record["broker_info"] == {}
    assert any("skipped" in line for line in said)
    assert not list(tmp_path.iterdir())  # no worker logs: nothing was started


def test_workers_that_exit_at_start_are_recorded_with_the_locks_versions(tmp_path, monkeypatch):
    """They report nothing before exiting, so the record names what the lock installed."""
    from teachlab.lab.matrix import runner

    experiment = experiment_get(slug="countdown-within-timeout")

    class Broker:
        version, port, url = "6.0.9", 1, "redis://127.0.0.1:1"

        def __init__(self, *args, **kwargs):
            pass

        def start(self):
            return self

        def stop(self):
            pass

    def workers_fail(*args, **kwargs):
        raise runner.WorkersFailed("redis-short-1 exited 4 times: ResponseError")

    monkeypatch.setattr(runner, "PrivateRedis", Broker)
    monkeypatch.setattr(runner, "env_build", lambda *a, **k: Path("python"))
    monkeypatch.setattr(runner, "lane_workers", workers_fail)
    found = _combination_run(
        combination=Combination("5.7", "6.0"),
        experiments=[experiment],
        redis_lanes={experiment.slug: True},
        learner=None,
        execute=lambda *a: [],
        logs=tmp_path,
        say=lambda text: None,
        estimate=lambda seconds: "0:00",
    )
    assert [r["verdict"] for r in found] == ["workers fail"]
    versions = found[0]["versions"]
    assert (versions["celery"], versions["kombu"], versions["redis"]) == ("5.7.0", "5.7.0", "6.0.9")

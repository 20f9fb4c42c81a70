"""A check limited to a Redis or kombu range (`on_redis`, `on_kombu`) counts only where the
run's versions are in it: one experiment states each outcome on its own releases."""

from __future__ import annotations

from teachlab.lab.experiments.catalog import experiment_get
from teachlab.lab.experiments.check_versions import check_applies


def _applying(slug: str, versions: dict) -> list[str]:
    experiment = experiment_get(slug=slug)
    return [
        c["id"] for c in experiment.checks if check_applies(check=c, versions={"main": versions})
    ]


def test_the_redis_6_0_checks_count_on_6_0_and_the_restore_checks_on_6_2_and_later():
    slug = "sweep-refused-on-redis-6-0"
    on_6_0 = ["never-received-on-6-0", "left-in-queue-on-6-0"]
    restored = ["restored-after-timeout", "ran-at-due-time"]
    assert _applying(slug, {"redis": "6.0.9", "kombu": ""}) == on_6_0
    assert _applying(slug, {"redis": "6.2.14", "kombu": "5.7.0"}) == restored
    assert _applying(slug, {"redis": "7.0.15", "kombu": "5.7.0"}) == restored


def test_the_kombu_checks_split_at_5_7_and_an_unknown_version_leaves_them_out():
    slug = "restore-interval-before-kombu-5-7"
    assert _applying(slug, {"redis": "7.0.15", "kombu": "5.7.0"}) == [
        "restored-every-timeout",
        "ran-at-due-time",
    ]
    assert _applying(slug, {"redis": "6.0.9", "kombu": "5.5.4"}) == [
        "restored-once-or-twice",
        "ran-at-due-time",
    ]
    assert _applying(slug, {"redis": "6.0.9", "kombu": ""}) == ["ran-at-due-time"]


def test_the_threads_overlap_counts_on_celery_5_7_and_one_at_a_time_before_it():
    """Before Celery 5.7 a failed cancel on the threads pool stops the worker (review9 U4)."""
    slug = "prefork-connection-loss-terminates"
    experiment = experiment_get(slug=slug)
    on = {"celery": "5.7.0", "kombu": "5.7.0", "redis": "7.0.15"}
    before = {"celery": "5.5.3", "kombu": "5.5.4", "redis": "7.0.15"}
    both = {"prefork": on, "threads": on}
    ids = [c["id"] for c in experiment.checks if check_applies(check=c, versions=both)]
    assert "threads-overlapped" in ids and "threads-one-at-a-time-before-5-7" not in ids
    both = {"prefork": before, "threads": before}
    ids = [c["id"] for c in experiment.checks if check_applies(check=c, versions=both)]
    assert "threads-one-at-a-time-before-5-7" in ids and "threads-overlapped" not in ids
    assert len(ids) == len(experiment.checks) - 1

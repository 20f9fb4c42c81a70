"""A check limited to a Redis or kombu range (`on_redis`, `on_kombu`) counts only where the
run's versions are in it: one experiment states each outcome on its own releases."""

from __future__ import annotations

from teachlab.lab.experiments.catalog import experiment_get
from teachlab.lab.experiments.runner import check_applies


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

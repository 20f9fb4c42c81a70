"""A check's `on_redis` / `on_kombu` / `on_celery` range, against the versions its run had."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from teachlab.lab.runs.lanes import lane_get
from teachlab.lab.worker.versions import broker_versions

# check field -> the version it is compared with (`on_redis: ">=6.2"`, `on_kombu: "<5.7"`)
CHECK_VERSION_KEYS = {"on_redis": "redis", "on_kombu": "kombu", "on_celery": "celery"}


def run_check_versions(run: dict) -> dict[str, str]:
    """What a check's `on_*` range is compared with: the run's Redis server and kombu as its
    workers reported them at firing. Where no worker came up to report (kombu 5.7 on Redis
    6.0), the Redis server is asked now; kombu is then unknown and an `on_kombu` check left
    out (and so an `on_celery` one)."""
    lane = lane_get(run["lane"])
    found = {key: run["versions"].get(key, "") for key in CHECK_VERSION_KEYS.values()}
    if lane.is_redis and not found["redis"]:
        found["redis"] = broker_versions(kind=lane.kind, url=lane.broker_url).get("redis", "")
    return found


def check_applies(*, check: dict, versions: dict[str, dict[str, str]]) -> bool:
    """A check with `on_redis` / `on_kombu` / `on_celery` counts only where its run's versions
    are in range."""
    for name, key in CHECK_VERSION_KEYS.items():
        if not check.get(name):
            continue
        try:
            found = Version(versions.get(check["run"], {}).get(key, ""))
        except InvalidVersion:
            return False
        if not SpecifierSet(check[name]).contains(found, prereleases=True):
            return False
    return True

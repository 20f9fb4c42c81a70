"""`lab matrix` on a small live sample, so the runner cannot rot: two experiments on two
combinations, one of them Redis 6.0.9, each worker set from its own virtualenv. The
virtualenvs and the Redis 6.0.9 wheel are cached under var/matrix/, so only a first run
downloads (about 80 s per virtualenv here); after that the test takes 65-90 s.
Under CI=true a combination that cannot be built fails the test instead of skipping it."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

from tests.stack import BASE_DIR, manage, missing
from tests.stack import test_env as stack_env

# A cold cache builds two virtualenvs first (about 80 s each, more on a loaded machine): past
# the suite's 300 s timeout, which killed the command and left its recorder behind.
pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(900)]

# Two short experiments on separate databases, so they overlap within a combination.
SAMPLE = ["prefork-child-killed-acks-late", "retry-keeps-expires"]


def _matrix(celery: str, redis: str, verified) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "manage.py", "lab", "matrix", "--celery", celery, "--redis", redis,
         "--experiment", *SAMPLE, "--json"],
        cwd=BASE_DIR,
        env=stack_env(TEACHLAB_LAB_VERIFIED_DIR=str(verified), TEACHLAB_LOCAL_CONTROLS="1"),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )  # fmt: skip
    try:
        records = json.loads(done.stdout)
    except ValueError:
        pytest.fail(f"lab matrix printed no JSON:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    not_run = [r for r in records if r["verdict"] == "not run"]
    if not_run:
        missing(f"Celery {celery} × Redis {redis} could not run: {not_run[0]['reason']}")
    assert done.returncode == 0, done.stderr[-3000:]
    return records


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> dict:
    manage("migrate", "--noinput", "-v", "0")
    verified = tmp_path_factory.mktemp("verified")
    records = _matrix("5.5", "6.0", verified) + _matrix("5.7", "7.0", verified)
    return {"records": records, "verified": verified}


def _by_combination(records: list[dict]) -> dict[tuple, dict]:
    return {
        (r["combination"]["celery"], r["combination"]["redis"], r["experiment"]): r for r in records
    }


def test_each_record_has_the_versions_the_workers_and_the_broker_reported(sample):
    found = _by_combination(sample["records"])
    assert len(found) == 4
    for slug in SAMPLE:
        old = found[("5.5", "6.0", slug)]["versions"]
        assert (old["celery"], old["kombu"], old["redis"]) == ("5.5.3", "5.5.4", "6.0.9")
        assert old["redis-py"] == "5.2.1"  # what celery[redis] 5.5 allows, not the project's
        own = found[("5.7", "7.0", slug)]["versions"]
        assert (own["celery"], own["kombu"]) == ("5.7.0", "5.7.0")
        assert own["redis"].startswith("7.0.")


def test_the_projects_own_combination_holds_and_every_check_has_its_observed_value(sample):
    for record in sample["records"]:
        assert record["verdict"] in {"holds", "fails"}, record
        assert record["checks"] and all("observed" in c for c in record["checks"])
        assert record["commit"] and record["at"] and record["seconds"] > 0
        if record["combination"] == {"celery": "5.7", "redis": "7.0"}:
            assert record["verdict"] == "holds", record["checks"]


def test_the_records_are_stored_per_experiment_with_the_files_digest(sample):
    for slug in SAMPLE:
        stored = json.loads((sample["verified"] / f"{slug}.json").read_text())["records"]
        digest = hashlib.sha256(
            (BASE_DIR / "lessons" / "experiments" / f"{slug}.yaml").read_bytes()
        ).hexdigest()
        assert [(r["combination"]["celery"], r["combination"]["redis"]) for r in stored] == [
            ("5.5", "6.0"),
            ("5.7", "7.0"),
        ]
        assert {r["digest"] for r in stored} == {digest}


def test_the_redis_6_0_experiment_holds_on_6_0_9_with_the_workers_exiting_and_on_7_0(tmp_path):
    """kombu 5.7 on Redis 6.0.9: the workers exit at start (their sweep's ZRANGE … BYSCORE is
    refused), and the experiment still runs and holds by its Redis 6.0 checks; on 7.0 by its
    restore checks."""
    manage("migrate", "--noinput", "-v", "0")
    slug = "sweep-refused-on-redis-6-0"
    done = subprocess.run(
        [sys.executable, "manage.py", "lab", "matrix", "--celery", "5.7", "--redis", "6.0,7.0",
         "--experiment", slug, "--json"],
        cwd=BASE_DIR,
        env=stack_env(TEACHLAB_LAB_VERIFIED_DIR=str(tmp_path), TEACHLAB_LOCAL_CONTROLS="1"),
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    try:
        records = {r["combination"]["redis"]: r for r in json.loads(done.stdout)}
    except ValueError:
        pytest.fail(f"lab matrix printed no JSON:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    if any(r["verdict"] == "not run" for r in records.values()):
        missing(f"Celery 5.7 could not run: {records}")
    old, new = records["6.0"], records["7.0"]
    assert old["versions"]["redis"] == "6.0.9" and old["versions"]["kombu"] == "5.7.0"
    assert old["verdict"] == "holds", old
    assert "value is not an integer or out of range" in old["reason"]
    assert old["reason"].startswith("workers exit at start: redis-versions-1 exited ")  # its own
    assert [c["says"].split(";")[0] for c in old["checks"]] == [
        "On Redis 6.0 no worker ever received the task",
        "On Redis 6.0 the task was still waiting in the broker when the watch ended.",
    ]
    assert new["versions"]["redis"].startswith("7.0.") and new["verdict"] == "holds", new
    assert float(new["checks"][0]["observed"]) >= 2  # received again after the timeout
    stored = json.loads((tmp_path / f"{slug}.json").read_text())["records"]
    assert [r["verdict"] for r in stored] == ["holds", "holds"]

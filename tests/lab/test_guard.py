"""The idempotency guard on the private test Redis: one claim wins, failure releases."""

import uuid

from teachlab.lab.worker import guard


def _key() -> str:
    return guard.guard_key(run_id=uuid.uuid4().hex, index=3)


def test_the_key_is_derived_from_the_work_not_from_a_task_id():
    assert guard.guard_key(run_id="r1", index=3) == guard.guard_key(run_id="r1", index=3)
    assert guard.guard_key(run_id="r1", index=3) != guard.guard_key(run_id="r1", index=4)


def test_a_second_copy_of_the_same_work_cannot_claim_it():
    key = _key()
    assert guard.guard_claim(key=key, holder="copy-1", ttl=60)
    assert not guard.guard_claim(key=key, holder="copy-2", ttl=60)


def test_releasing_after_a_failure_lets_a_retry_claim_the_work():
    key = _key()
    assert guard.guard_claim(key=key, holder="first", ttl=60)
    assert guard.guard_release(key=key, holder="first")
    assert guard.guard_claim(key=key, holder="retry", ttl=60)


def test_a_copy_that_does_not_hold_the_key_cannot_release_it():
    key = _key()
    assert guard.guard_claim(key=key, holder="owner", ttl=60)
    assert not guard.guard_release(key=key, holder="someone-else")
    assert not guard.guard_claim(key=key, holder="third", ttl=60)


def test_the_claim_expires_so_a_lost_worker_cannot_block_the_work_forever():
    from teachlab.lab.runs.store import app_redis

    key = _key()
    assert guard.guard_claim(key=key, holder="owner", ttl=30)
    assert 0 < app_redis().ttl(key) <= 30


def test_a_claim_lasts_its_ttl_and_never_less_than_a_second():
    from teachlab.lab.runs.store import app_redis

    for ttl, expected in [(0, 1), (1, 1), (7, 7)]:
        key = _key()
        assert guard.guard_claim(key=key, holder="copy-1", ttl=ttl)
        assert app_redis().ttl(key) == expected, ttl


def test_the_failure_count_rises_per_run_of_the_body_and_is_kept_for_a_day():
    from teachlab.lab.runs.store import app_redis

    run = uuid.uuid4().hex
    assert [guard.failure_count(run_id=run, index=2) for _ in range(3)] == [1, 2, 3]
    assert guard.failure_count(run_id=run, index=3) == 1
    assert app_redis().ttl(f"lab:fails:{run}:2") == 24 * 3600

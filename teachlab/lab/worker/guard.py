"""The idempotency guard: claim a key derived from the work with SET NX + expiry; release it
only when the body fails, so duplicates are suppressed but a real retry still runs."""

from __future__ import annotations

from teachlab.lab.runs.store import app_redis

# Delete only if we still hold it: after an expiry someone else may own the key.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def guard_key(*, run_id: str, index: int) -> str:
    return f"lab:guard:{run_id}:{index}"


def guard_claim(*, key: str, holder: str, ttl: int) -> bool:
    """True when this call now owns the work; False when another copy already claimed it."""
    return bool(app_redis().set(key, holder, nx=True, ex=max(1, int(ttl))))


def guard_release(*, key: str, holder: str) -> bool:
    return bool(app_redis().eval(_RELEASE, 1, key, holder))


def failure_count(*, run_id: str, index: int) -> int:
    """How many times this work item's body has now been run under `fail` (1 on the first)."""
    key = f"lab:fails:{run_id}:{index}"
    pipe = app_redis().pipeline()
    pipe.incr(key)
    pipe.expire(key, 24 * 3600)
    return int(pipe.execute()[0])

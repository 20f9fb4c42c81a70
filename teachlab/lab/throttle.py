"""A fixed-window counter in Redis for lab actions that run_fire's limits do not cover
(worker controls): enough to stop a stuck button or a script from hammering the workers."""

from __future__ import annotations

import time

from teachlab.lab.store import app_redis


class ThrottleExceeded(Exception):
    """str() is a message fit for the learner."""


def throttle_check(*, key: str, limit: int, window: int = 60) -> None:
    """Count one action under `key`; raise ThrottleExceeded past `limit` per `window` s."""
    bucket = f"lab:throttle:{key}:{int(time.time() // window)}"
    client = app_redis()
    pipe = client.pipeline()
    pipe.incr(bucket)
    pipe.expire(bucket, window * 2)
    count, _ = pipe.execute()
    if count > limit:
        raise ThrottleExceeded(
            f"That is more than {limit} of these in a minute; wait a moment and try again."
        )

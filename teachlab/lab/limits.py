"""Per-learner limits on firing: runs at once and runs per minute. They are settings, so a
classroom server and a laptop can differ. What one run may ask for (tasks, longest countdown)
is part of the run-parameter schema, params.py."""

from __future__ import annotations

import time

import redis
from django.conf import settings

from teachlab.lab.errors import LabLimitError, LaneUnavailable
from teachlab.lab.store import app_redis


def active_runs_check(*, active_runs: int) -> None:
    """Raise LabLimitError when the learner already has as many runs going as allowed."""
    at_once = settings.LAB_MAX_RUNS_AT_ONCE
    if active_runs >= at_once:
        raise LabLimitError(
            f"You already have {active_runs} runs going (the limit is {at_once}). Wait for one "
            "to finish, then fire again."
        )


def rate_limit_take(*, learner) -> None:
    """Fixed one-minute windows in Redis, one per learner and, when LAB_CLASS_RUNS_PER_MINUTE
    is set (classroom mode), one for everyone together; raises when either is full."""
    per_minute = settings.LAB_RUNS_PER_MINUTE
    class_per_minute = settings.LAB_CLASS_RUNS_PER_MINUTE
    window = int(time.time() // 60)
    key = f"lab:rate:{learner.key}:{window}"  # keys are unique for ever; ids can be reused
    class_key = f"lab:rate:class:{window}"
    pipe = app_redis().pipeline()
    pipe.incr(key)
    pipe.expire(key, 120)
    if class_per_minute:
        pipe.incr(class_key)
        pipe.expire(class_key, 120)
    try:
        answers = pipe.execute()
    except redis.RedisError as exc:
        raise LaneUnavailable(app_redis_down(exc)) from None
    wait = 60 - int(time.time() % 60)
    if int(answers[0]) > per_minute:
        raise LabLimitError(f"You may fire {per_minute} runs a minute; try again in {wait} s.")
    if class_per_minute and int(answers[2]) > class_per_minute:
        raise LabLimitError(
            f"The whole class may fire {class_per_minute} runs a minute between them, and this "
            f"minute's are used up; try again in {wait} s (or watch the presenter's run)."
        )


def app_redis_down(exc: Exception) -> str:
    """The message when the lab's own Redis (rate limits, worker registry) does not answer."""
    from teachlab.lab.lanes import HOW_TO_GET

    return (
        f"The lab's Redis does not answer ({exc}), so nothing can be fired or counted. "
        f"To get it: {HOW_TO_GET['redis']}."
    )

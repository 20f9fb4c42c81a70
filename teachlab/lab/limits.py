"""Per-learner limits on firing: runs at once and runs per minute. They are settings, so a
classroom server and a laptop can differ. What one run may ask for (tasks, longest countdown)
is part of the run-parameter schema, params.py."""

from __future__ import annotations

import redis
from django.conf import settings

from teachlab import ratelimits
from teachlab.identity import payer_of
from teachlab.lab.errors import LabLimitError, LaneUnavailable


def active_runs_check(*, active_runs: int) -> None:
    """Raise LabLimitError when the learner already has as many runs going as allowed."""
    at_once = settings.LAB_MAX_RUNS_AT_ONCE
    if active_runs >= at_once:
        raise LabLimitError(
            f"You already have {active_runs} runs going (the limit is {at_once}). Wait for one "
            "to finish, then fire again."
        )


def rate_limit_take(*, learner) -> None:
    """A moving one-minute window per learner and, when LAB_CLASS_RUNS_PER_MINUTE is set
    (classroom mode), one for everyone together (teachlab/ratelimits.py); raises when either
    is full, and spends from neither then."""
    per_minute = settings.LAB_RUNS_PER_MINUTE
    class_per_minute = settings.LAB_CLASS_RUNS_PER_MINUTE
    mine = ratelimits.Budget("lab-runs", per_minute, 60)
    everyone = ratelimits.Budget("lab-runs-class", class_per_minute, 60)
    try:
        refused = ratelimits.spend_all([(mine, (payer_of(learner),)), (everyone, ("class",))])
        if not refused:
            return
        budget, who = (mine, payer_of(learner)) if refused == 1 else (everyone, "class")
        wait = ratelimits.wait_for(budget, who)
    except redis.RedisError as exc:
        raise LaneUnavailable(app_redis_down(exc)) from None
    if refused == 1:
        raise LabLimitError(f"You may fire {per_minute} runs a minute; try again in {wait} s.")
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

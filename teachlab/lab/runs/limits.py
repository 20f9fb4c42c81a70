"""Per-learner limits on firing: runs at once, runs per minute, and what the runs cost (the
deliveries of one run, of one person's hour, and the copies a lane holds at once; costs.py
estimates them). They are settings, so a classroom server and a laptop can differ. What one
run may ask for (tasks, longest countdown) is part of the run-parameter schema, params.py."""

from __future__ import annotations

import math
import time

import redis
from django.conf import settings

from teachlab.core import ratelimits
from teachlab.core.identity import payer_of
from teachlab.lab.runs.costs import (
    BYTES_PER_HELD_DELIVERY,
    RunCost,
    held_from,
    memory_text,
    run_params_stored,
)
from teachlab.lab.runs.errors import LabError, LabLimitError, LaneUnavailable
from teachlab.lab.runs.lanes import Lane

# The hourly delivery budget is counted in tens: the moving window keeps one Redis list entry
# per unit spent, and a person's hour of 30,000 deliveries should not be a 30,000-entry list.
DELIVERY_UNIT = 10


def active_runs_check(*, active_runs: int) -> None:
    """Raise LabLimitError when the learner already has as many runs going as allowed."""
    at_once = settings.LAB_MAX_RUNS_AT_ONCE
    if active_runs >= at_once:
        raise LabLimitError(
            f"You already have {active_runs} runs going (the limit is {at_once}). Wait for one "
            "to finish, then fire again."
        )


def run_cost_check(cost: RunCost) -> None:
    """Raise LabLimitError when one run would make more deliveries than one run may."""
    most = settings.LAB_MAX_DELIVERIES_PER_RUN
    if most > 0 and cost.deliveries > most:
        raise LabLimitError(
            f"This run would make {cost.text}; one run may make at most {most:,} deliveries. "
            "Fewer tasks, a shorter countdown or a lane with a longer visibility timeout make "
            "fewer copies."
        )


def live_runs(*, now: float, **where):
    """The runs still going (`where` narrows them: a lane, a network)."""
    from teachlab.lab.models import Run

    return list(
        Run.objects.running()
        .filter(deadline__gt=now, **where)
        .only("params", "fired_at", "lane", "status", "deadline")
    )


def runs_held(runs, *, now: float) -> int:
    """Copies these runs will still have their lanes' workers hold, at their worst."""
    from teachlab.lab.runs.lanes import lane_get

    held = 0
    for run in runs:
        try:
            lane = lane_get(run.lane)
        except LabError:  # a lane taken out of the configuration since the run
            continue
        held += held_from(
            run_params_stored(run.params), lane, fired_at=run.fired_at or now, now=now
        )
    return held


def lane_held(lane: Lane, *, now: float | None = None) -> int:
    """Copies the live runs on `lane` will still have its workers hold, at their worst."""
    now = time.time() if now is None else now
    return runs_held(live_runs(now=now, lane=lane.name), now=now)


def lane_load_check(cost: RunCost, lane: Lane, *, now: float | None = None) -> None:
    """Raise LabLimitError when this run's copies and those the lane's live runs hold would
    pass LAB_MAX_HELD_PER_LANE: one lane's workers are shared by everyone firing at it."""
    most = settings.LAB_MAX_HELD_PER_LANE
    if most <= 0:
        return
    held = lane_held(lane, now=now)
    if held + cost.held > most:
        free = max(0, most - held)
        raise LabLimitError(
            f"{lane.name} is busy: the runs on it now will hold up to {held:,} copies "
            f"({memory_text(held * BYTES_PER_HELD_DELIVERY)} of worker "
            f"memory), and this run would add {cost.held:,}; the lane takes {most:,} at once. "
            f"Fire a smaller run (at most {free:,} held copies), or wait for one to finish."
        )


def network_load_check(cost: RunCost, *, network: str, now: float | None = None) -> None:
    """Raise LabLimitError when one client network (identity.network_of) would have more runs
    going than LAB_NETWORK_MAX_RUNS_AT_ONCE, or its runs would hold more copies than
    LAB_NETWORK_MAX_HELD: learners each have their own budgets, and a network minting learners
    must not take the lanes from everyone else. Sized for a class of forty behind one router,
    each with a run going."""
    if not network:
        return
    now = time.time() if now is None else now
    runs = live_runs(now=now, network=network)
    most_runs = settings.LAB_NETWORK_MAX_RUNS_AT_ONCE
    if most_runs > 0 and len(runs) >= most_runs:
        raise LabLimitError(
            f"Your network (everyone reaching this server from your address) already has "
            f"{len(runs)} runs going; the lab takes {most_runs} at once from one network. "
            "Wait for one to finish, then fire again."
        )
    most_held = settings.LAB_NETWORK_MAX_HELD
    if most_held <= 0:
        return
    held = runs_held(runs, now=now)
    if held + cost.held > most_held:
        free = max(0, most_held - held)
        raise LabLimitError(
            f"The runs going from your network (everyone reaching this server from your "
            f"address) will hold up to {held:,} copies, and this run would add {cost.held:,}; "
            f"the lab holds {most_held:,} at once for one network. Fire a smaller run (at most "
            f"{free:,} held copies), or wait for one to finish."
        )


def run_cost_take(p, lane: Lane, *, now: float | None = None) -> RunCost:
    """The run's cost, refused (LabLimitError) past the per-run or the lane's limit. Applies
    to every run a person fires, a workshop room's included: these protect the workers."""
    from teachlab.lab.runs.costs import run_cost

    now = time.time() if now is None else now
    cost = run_cost(p, lane, now=now)
    run_cost_check(cost)
    lane_load_check(cost, lane, now=now)
    return cost


def rate_limit_take(*, learner, deliveries: int = 0) -> None:
    """A moving one-minute window per learner and, when LAB_CLASS_RUNS_PER_MINUTE is set
    (classroom mode), one for everyone together (teachlab/core/ratelimits.py), and the learner's
    hour of deliveries (LAB_DELIVERIES_PER_HOUR); raises when any is full, and spends from
    none then."""
    per_minute = settings.LAB_RUNS_PER_MINUTE
    class_per_minute = settings.LAB_CLASS_RUNS_PER_MINUTE
    per_hour = settings.LAB_DELIVERIES_PER_HOUR
    payer = payer_of(learner)
    mine = ratelimits.Budget("lab-runs", per_minute, 60)
    everyone = ratelimits.Budget("lab-runs-class", class_per_minute, 60)
    hourly = ratelimits.Budget(
        "lab-deliveries", math.ceil(per_hour / DELIVERY_UNIT) if per_hour > 0 else 0, 3600
    )
    units = max(1, math.ceil(deliveries / DELIVERY_UNIT))
    try:
        refused = ratelimits.spend_all(
            [(mine, (payer,)), (everyone, ("class",)), (hourly, (payer,), units)]
        )
        if not refused:
            return
        budget, who = [(mine, payer), (everyone, "class"), (hourly, payer)][refused - 1]
        wait = ratelimits.wait_for(budget, who)
        left = ratelimits.remaining(hourly, payer) * DELIVERY_UNIT if refused == 3 else 0
    except redis.RedisError as exc:
        raise LaneUnavailable(app_redis_down(exc)) from None
    if refused == 1:
        raise LabLimitError(f"You may fire {per_minute} runs a minute; try again in {wait} s.")
    if refused == 3:
        raise LabLimitError(
            f"This run would make about {deliveries:,} deliveries, and you have about "
            f"{left:,} left of the {per_hour:,} one person may fire in an hour. Fire a "
            f"smaller run, or wait: more are free in {wait} s."
        )
    raise LabLimitError(
        f"The whole class may fire {class_per_minute} runs a minute between them, and this "
        f"minute's are used up; try again in {wait} s (or watch the presenter's run)."
    )


def app_redis_down(exc: Exception) -> str:
    """The message when the lab's own Redis (rate limits, worker registry) does not answer."""
    from teachlab.lab.runs.lanes import HOW_TO_GET

    return (
        f"The lab's Redis does not answer ({exc}), so nothing can be fired or counted. "
        f"To get it: {HOW_TO_GET['redis']}."
    )

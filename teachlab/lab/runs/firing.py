"""Firing a run: check the parameters and the learner's limits, store the run, publish its
tasks. Views, `lab run`, workshop rooms, experiments and `lab fidelity` all fire through
`run_fire`, so a run fired from the browser and one fired from a shell behave the same."""

from __future__ import annotations

import logging
import math
import time
import uuid
from datetime import UTC, datetime

from teachlab.lab.eventlog.settle import run_settle
from teachlab.lab.eventlog.stream import log_open
from teachlab.lab.models import Run
from teachlab.lab.runs import limits
from teachlab.lab.runs.errors import LabInputError, LaneUnavailable
from teachlab.lab.runs.lanes import Lane, lane_get, lane_status
from teachlab.lab.runs.params import RunParams, params_limits_check, params_parse, prediction_parse
from teachlab.lab.runs.run_versions import lane_versions
from teachlab.lab.worker.tasks import task_name

log = logging.getLogger(__name__)


def _active_runs(learner) -> int:
    active = 0
    for run in Run.objects.owned_by(learner).running():
        if run_settle(run).status == Run.Status.RUNNING:
            active += 1
    return active


def _deadline(p: RunParams, lane: Lane, *, now: float) -> float:
    last_due = p.due_in(p.count - 1, now=now)
    attempts = p.fail + 1 if p.retry else 1
    body = attempts * (p.duration + p.retry_delay)
    return now + last_due + body + 2 * (lane.visibility_timeout or 0) + 60


def run_fire(
    *,
    learner,
    lane: str | Lane,
    params: dict | RunParams,
    prediction=None,
    label: str = "",
    check_limits: bool = True,
    network: str = "",
) -> Run:
    """Validate, check the learner's limits, store the run, publish its tasks.

    Raises LabInputError, LabLimitError or LaneUnavailable with a message for the learner.
    `network` is the client network that fires it (a browser's; "" from a shell), charged
    with the run against the per-network ceiling.
    If the broker goes away halfway, the run is kept as `failed` with how many tasks went out.
    """
    lane = lane_get(lane)
    now = time.time()
    p = params if isinstance(params, RunParams) else params_parse(params, now=now)
    prediction = prediction_parse(prediction)
    _fire_check(p, lane, learner=learner, now=now, network=network, check_limits=check_limits)
    run = Run.objects.create(
        learner=learner,
        lane=lane.name,
        params=p.as_dict(),
        prediction=prediction,
        label=label[:120],
        network=network[:64],
        task_ids=[str(uuid.uuid4()) for _ in range(p.count)],
        visibility_timeout=lane.visibility_timeout,
        versions=lane_versions(lane=lane.name),
        fired_at=now,
        deadline=_deadline(p, lane, now=now),
    )
    _publish_or_fail(run, lane, p)
    run.published_at = time.time()
    run.save(update_fields=["published_at"])
    return run


def _fire_check(p: RunParams, lane: Lane, *, learner, now, network: str, check_limits: bool):
    """Refuse a run the lane cannot run or the learner may not fire, before anything is
    stored; the learner's rate budget is spent last, only by a run fired."""
    if lane.plain:
        raise LabInputError(
            f"{lane.name} is the plain-Celery control lane; `manage.py lab fidelity` fires it."
        )
    if p.die and lane.pool != "prefork":
        raise LabInputError(
            f"die kills the pool child running the body; {lane.name} runs the {lane.pool} "
            "pool, where that would be the whole worker. Use a prefork lane."
        )
    if check_limits:
        params_limits_check(p, now=now)
        cost = limits.run_cost_take(p, lane, now=now)
        limits.active_runs_check(active_runs=_active_runs(learner))
        limits.network_load_check(cost, network=network, now=now)
    status = lane_status(lane, fresh=True)
    if not status.available:
        raise LaneUnavailable(f"{status.reason}. To get it: {status.how_to_get}.")
    if check_limits:
        # last: a run refused for anything else spends none of the learner's budgets
        limits.rate_limit_take(learner=learner, deliveries=cost.deliveries)


def _publish_or_fail(run: Run, lane: Lane, p: RunParams) -> None:
    """Open the run's log and publish its tasks; a broker that goes away halfway leaves the
    run `failed` with how many tasks went out."""
    sent = 0
    try:
        log_open(run.id)
        sent = _publish(run, lane, p)
    except Exception as exc:
        log.exception("publishing run %s failed after %d tasks", run.id, sent)
        run.status = Run.Status.FAILED
        # Stored for the run's page without the broker's address or the OS's error (issue
        # 26); the exception, shown to staff and local runs, keeps them.
        run.error = (
            f"The {lane.name} broker went away while publishing: {sent} of {p.count} tasks "
            "went out."
        )
        run.save(update_fields=["status", "error"])
        raise LaneUnavailable(f"{run.error} ({type(exc).__name__}: {exc})") from exc


def task_meta(*, run: Run, lane: Lane, p: RunParams) -> dict:
    """The keyword arguments every task of a run carries (its index and publish time aside);
    the publisher here and the experiments' just-in-time feeder both send these."""
    return {
        "run": run.id,
        "fired_at": run.fired_at,
        "vt": lane.visibility_timeout,
        "tasks": len(run.task_ids) or p.count,
        "prediction": run.prediction,
        "duration": p.duration,
        "guard_on": p.guard,
        "guard_ttl": p.guard_ttl,
        "fail": p.fail,
        "retry": p.retry,
        "retry_delay": p.retry_delay,
        "die": p.die,
    }


def _publish(run: Run, lane: Lane, p: RunParams) -> int:
    from teachlab.lab.worker.celery_app import lane_app

    app = lane_app(lane)
    name = task_name(
        acks_late=p.acks_late,
        reject_on_worker_lost=p.reject_on_worker_lost,
        retry_on_worker_lost=p.retry_on_worker_lost,
    )
    meta = task_meta(run=run, lane=lane, p=p)
    # One short retry: a broker that is gone should fail the run quickly, not hang the page.
    policy = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
    sent = 0
    with app.producer_or_acquire() as producer:
        for index, task_id in enumerate(run.task_ids):
            published = time.time()
            options = {}
            due = p.due_in(index, now=run.fired_at)
            wait = due - (published - run.fired_at)
            if lane.kind == "rabbit" and wait > 0:
                # Native delayed delivery truncates to whole seconds: round up, never early.
                options["countdown"] = math.ceil(wait)
            elif p.eta is not None:
                options["eta"] = datetime.fromtimestamp(run.fired_at + due, tz=UTC)
            elif wait > 0:
                options["countdown"] = wait
            if p.expires is not None:
                options["expires"] = p.expires
            app.send_task(
                name,
                kwargs={**meta, "index": index, "published_at": published},
                task_id=task_id,
                producer=producer,
                retry=True,
                retry_policy=policy,
                **options,
            )
            sent += 1
    return sent

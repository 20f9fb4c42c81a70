"""A learner's attempts: store the prediction, run the steps in the background, keep the verdict.

The web process runs each attempt in a daemon thread: the steps are mostly waiting, and the
crash or warm shutdown is sent through the lab's worker registry, so no extra process is
needed. An attempt whose thread died with the server is reported as interrupted.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone

from teachlab.lab.experiments.catalog import Experiment, experiment_get
from teachlab.lab.experiments.models import Attempt
from teachlab.lab.experiments.runner import experiment_execute, prediction_parse

log = logging.getLogger(__name__)
GRACE = 120  # seconds beyond an experiment's planned length before a running attempt is stale


class AttemptRefused(ValueError):
    """Why an attempt cannot start now, in words for the learner."""


def _at_once() -> int:
    return int(getattr(settings, "LAB_EXPERIMENTS_AT_ONCE", 4))


def attempt_is_stale(attempt: Attempt, experiment: Experiment | None = None) -> bool:
    experiment = experiment or experiment_get(slug=attempt.slug)
    planned = experiment.seconds if experiment else 0
    return attempt.status == Attempt.Status.RUNNING and (
        timezone.now() - attempt.created_at > timedelta(seconds=planned + GRACE)
    )


def attempts_expire() -> None:
    """Mark attempts whose runner is gone (server restarted) as failed, with the reason."""
    for attempt in Attempt.objects.filter(status=Attempt.Status.RUNNING):
        if attempt_is_stale(attempt):
            attempt.status = Attempt.Status.FAILED
            attempt.error = "The lab restarted while this experiment ran; start it again."
            attempt.finished_at = timezone.now()
            attempt.save(update_fields=["status", "error", "finished_at"])


def attempt_start(
    *, learner, experiment: Experiment, raw_prediction, background: bool = True
) -> Attempt:
    """Check the prediction and the limits, store the attempt, start its steps."""
    try:
        value = prediction_parse(experiment=experiment, raw=raw_prediction)
    except ValueError as exc:
        raise AttemptRefused(str(exc)) from None
    if value is None:
        raise AttemptRefused("Make a prediction first: that is the point of the experiment.")
    attempts_expire()
    if Attempt.objects.owned_by(learner).filter(status=Attempt.Status.RUNNING).exists():
        raise AttemptRefused("One of your experiments is still running; wait for its verdict.")
    if Attempt.objects.filter(status=Attempt.Status.RUNNING).count() >= _at_once():
        raise AttemptRefused(
            "The lab's workers are busy with other experiments right now; try again in a minute."
        )
    attempt = Attempt.objects.create(
        learner=learner,
        slug=experiment.slug,
        prediction={"kind": experiment.prediction["kind"], "value": value},
        step="starting",
    )
    if background:
        threading.Thread(
            target=attempt_work,
            kwargs={"attempt_id": attempt.id},
            name=f"attempt-{attempt.id}",
            daemon=True,
        ).start()
    else:
        attempt_work(attempt_id=attempt.id)
        attempt.refresh_from_db()
    return attempt


def attempt_work(*, attempt_id: str) -> None:
    """Carry out the attempt's experiment and store the verdict (runs in its own thread)."""
    close_old_connections()
    attempt = Attempt.objects.get(id=attempt_id)
    experiment = experiment_get(slug=attempt.slug)
    lock = threading.Lock()

    def progress(text: str) -> None:
        with lock:
            Attempt.objects.filter(id=attempt_id).update(step=text[:200])

    def on_fired(name: str, run) -> None:
        with lock:
            current = Attempt.objects.get(id=attempt_id)
            current.runs = {**current.runs, name: run.id}
            current.save(update_fields=["runs"])

    try:
        result = experiment_execute(
            experiment=experiment,
            learner=attempt.learner,
            prediction=attempt.prediction.get("value"),
            progress=progress,
            on_fired=on_fired,
        )
    except Exception as exc:
        log.exception("attempt %s at %s failed", attempt_id, attempt.slug)
        Attempt.objects.filter(id=attempt_id).update(
            status=Attempt.Status.FAILED,
            error=f"The experiment could not run: {exc}"[:2000],
            finished_at=timezone.now(),
        )
    else:
        Attempt.objects.filter(id=attempt_id).update(
            status=Attempt.Status.DONE,
            result=result,
            step="finished",
            finished_at=timezone.now(),
        )
    finally:
        connection.close()


def attempt_for_learner(*, attempt_id: str, learner) -> Attempt | None:
    """The learner's own attempt or None: someone else's looks exactly like a missing one."""
    if not isinstance(attempt_id, str) or not 0 < len(attempt_id) <= 24:
        return None
    attempt = Attempt.objects.owned_by(learner).filter(id=attempt_id).first()
    if attempt is not None and attempt_is_stale(attempt):
        attempts_expire()
        attempt.refresh_from_db()
    return attempt


def attempts_latest(*, learner) -> dict[str, Attempt]:
    """slug -> the learner's latest attempt, for the experiments list."""
    latest: dict[str, Attempt] = {}
    for attempt in Attempt.objects.owned_by(learner).order_by("created_at"):
        latest[attempt.slug] = attempt
    return latest


def wait_for_first_run(*, attempt: Attempt, within: float = 4.0) -> Attempt:
    """Give the runner a moment to fire, so the attempt page opens with the live run."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        attempt.refresh_from_db()
        if attempt.runs or attempt.status != Attempt.Status.RUNNING:
            break
        time.sleep(0.2)
    return attempt

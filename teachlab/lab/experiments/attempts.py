"""A learner's attempts: store the prediction, queue the steps for the jobs worker, keep the
verdict.

Where an attempt runs: the view stores it `queued` and, once that row is committed, sends
`experiment_attempt_run` (tasks.py) to the project's jobs worker (teachlab/celery.py, queue
`teachlab-jobs`). The worker marks it `running`, carries out the steps and stores the verdict.
So a restart of the web process loses nothing, a page reload shows where the attempt is, and
the worker may run on another machine.

When the jobs worker dies mid-attempt, a sweep marks the attempt failed with the reason; the
task is not `acks_late`. Redelivery would re-fire the whole experiment into lanes another
attempt may be using by then, and on Redis it needs a visibility timeout longer than the
longest experiment (149 s) or a slow attempt is handed to a second thread while the first still
runs: the very duplicate this lab teaches about. Instead the worker beats every BEAT seconds;
a running attempt with no beat for BEAT_LOST seconds, or running GRACE seconds past its planned
length, is failed, and so is one no worker took within QUEUE_WAIT seconds (its message expires
then, and the worker claims only a still-queued attempt, so a swept one never starts late).
The sweep runs whenever an attempt is started or its page is polled, on any web process.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from teachlab.core.dbthreads import connection_release
from teachlab.lab.experiments.catalog import Experiment, experiment_get
from teachlab.lab.experiments.models import Attempt
from teachlab.lab.experiments.prediction import prediction_parse, timing_parse
from teachlab.lab.experiments.runner import experiment_execute
from teachlab.lab.runs.errors import learner_text

log = logging.getLogger(__name__)
GRACE = 120  # seconds beyond an experiment's planned length before a running attempt is stale
BEAT = 5  # seconds between the jobs worker's signs of life on a running attempt
BEAT_LOST = 30  # seconds without one before the attempt counts as lost with its worker
ATTEMPT_TASK = "teachlab.experiment_attempt_run"  # the jobs worker's task (tasks.py)
QUEUE_WAIT = 60  # seconds a queued attempt may wait for a jobs worker to take it
WORKER_HINT = "`celery -A teachlab worker -Q teachlab-jobs` (scripts/run starts it)"
LOST = {
    "queued": f"No jobs worker took this experiment within {QUEUE_WAIT} s: is {WORKER_HINT} "
    "running? Start the experiment again once it is.",
    "silent": f"The jobs worker running this experiment stopped (no sign of it for {BEAT_LOST} s)"
    "; start it again.",
    "overran": "This experiment ran far past its planned length and was given up; start it again.",
}


class AttemptRefused(ValueError):
    """Why an attempt cannot start now, in words for the learner."""


def _at_once() -> int:
    return int(getattr(settings, "LAB_EXPERIMENTS_AT_ONCE", 4))


def attempt_lost_reason(attempt: Attempt, experiment: Experiment | None = None) -> str:
    """Why an active attempt counts as lost ("" while it is fine): see the module docstring."""
    now = timezone.now()
    if attempt.status == Attempt.Status.QUEUED:
        waited = now - attempt.created_at
        return LOST["queued"] if waited > timedelta(seconds=QUEUE_WAIT) else ""
    if attempt.status != Attempt.Status.RUNNING:
        return ""
    last = attempt.beat_at or attempt.started_at or attempt.created_at
    if now - last > timedelta(seconds=BEAT_LOST):
        return LOST["silent"]
    experiment = experiment or experiment_get(slug=attempt.slug)
    planned = experiment.seconds if experiment else 0
    began = attempt.started_at or attempt.created_at
    return LOST["overran"] if now - began > timedelta(seconds=planned + GRACE) else ""


def attempt_is_stale(attempt: Attempt, experiment: Experiment | None = None) -> bool:
    return bool(attempt_lost_reason(attempt, experiment))


def attempts_expire() -> None:
    """Mark attempts whose jobs worker is gone (or never came) as failed, with the reason."""
    for attempt in Attempt.objects.filter(status__in=Attempt.ACTIVE):
        reason = attempt_lost_reason(attempt)
        if reason:  # only if it is still in the state judged: the worker may just have moved on
            Attempt.objects.filter(id=attempt.id, status=attempt.status).update(
                status=Attempt.Status.FAILED, error=reason, finished_at=timezone.now()
            )


def attempt_start(*, learner, experiment: Experiment, raw_prediction, raw_timing=None) -> Attempt:
    """Check the prediction and the limits, store the attempt, queue it for the jobs worker
    once the row is committed. An attempt that could not be queued comes back failed, with
    the reason in `error` (see `attempt_queue_failed`)."""
    try:
        value = prediction_parse(experiment=experiment, raw=raw_prediction)
    except ValueError as exc:
        raise AttemptRefused(str(exc)) from None
    if value is None:
        raise AttemptRefused("Make a prediction first: that is the point of the experiment.")
    try:
        timing = timing_parse(experiment=experiment, raw=raw_timing)
    except ValueError as exc:
        raise AttemptRefused(str(exc)) from None
    attempts_expire()
    active = Attempt.objects.filter(status__in=Attempt.ACTIVE)
    if active.filter(learner=learner).exists():
        raise AttemptRefused("One of your experiments is still running; wait for its verdict.")
    if active.count() >= _at_once():
        raise AttemptRefused(
            "The lab's workers are busy with other experiments right now; try again in a minute."
        )
    attempt = Attempt.objects.create(
        learner=learner,
        slug=experiment.slug,
        prediction={"kind": experiment.prediction["kind"], "value": value, "timing": timing},
        status=Attempt.Status.QUEUED,
        step="waiting for the jobs worker",
    )
    transaction.on_commit(lambda: attempt_enqueue(attempt_id=attempt.id))
    attempt.refresh_from_db()
    return attempt


def attempt_enqueue(*, attempt_id: str) -> bool:
    """Send the attempt to the jobs worker. When its broker does not answer, the attempt is
    failed with a message saying so, rather than the request failing."""
    from kombu.exceptions import OperationalError

    from teachlab.celery import app as jobs_app  # (its import sets Django's settings module)

    try:
        # By name, not through tasks.py: the task module imports this one to do the work.
        jobs_app.send_task(
            ATTEMPT_TASK,
            args=[attempt_id],
            expires=QUEUE_WAIT,  # a worker that comes back later must not run a swept attempt
            retry=True,
            retry_policy={"max_retries": 1, "interval_start": 0.5},
        )
    except (OperationalError, OSError) as exc:
        log.warning("attempt %s could not be queued: %s", attempt_id, exc)
        Attempt.objects.filter(id=attempt_id, status=Attempt.Status.QUEUED).update(
            status=Attempt.Status.FAILED,
            error=(
                "The lab could not queue this experiment: its jobs broker does not answer. "
                "Nothing ran; try again in a minute, and if it persists tell whoever runs "
                "this server."
            ),  # (the address and the OS's error are in the log line above: issue 26)
            finished_at=timezone.now(),
        )
        return False
    return True


def attempt_queue_failed(attempt: Attempt) -> bool:
    """Failed before any worker took it: the learner should see why on the form itself."""
    return attempt.status == Attempt.Status.FAILED and attempt.started_at is None


def _worker_label() -> str:
    return f"{socket.gethostname()} pid {os.getpid()}"


def _attempt_claim(attempt_id: str) -> bool:
    """Take the attempt only while it is still queued: a second delivery finds it taken."""
    now = timezone.now()
    return bool(
        Attempt.objects.filter(id=attempt_id, status=Attempt.Status.QUEUED).update(
            status=Attempt.Status.RUNNING,
            started_at=now,
            beat_at=now,
            worker=_worker_label(),
            step="starting",
        )
    )


@contextmanager
def _beating(attempt_id: str):
    """Sign of life every BEAT seconds while the body runs, so a sweep can tell a lost one."""
    done = threading.Event()

    def beat() -> None:
        try:
            while not done.wait(BEAT):
                Attempt.objects.filter(id=attempt_id).update(beat_at=timezone.now())
                connection_release()
        finally:
            connection.close()

    beating = threading.Thread(target=beat, name=f"attempt-beat-{attempt_id}", daemon=True)
    beating.start()
    try:
        yield
    finally:
        done.set()
        beating.join(timeout=BEAT + 1)


def _reporters(attempt_id: str):
    """(progress, on_fired) for experiment_execute: the step line and the fired runs, stored
    on the attempt for its page; the runs' threads call them, so one at a time."""
    lock = threading.Lock()

    def progress(text: str) -> None:
        with lock:
            Attempt.objects.filter(id=attempt_id).update(step=text[:200])

    def on_fired(name: str, run) -> None:
        with lock:
            current = Attempt.objects.get(id=attempt_id)
            current.runs = {**current.runs, name: run.id}
            current.save(update_fields=["runs"])

    return progress, on_fired


def attempt_work(*, attempt_id: str) -> None:
    """Carry out the attempt's experiment and store the verdict (in the jobs worker; called by
    tasks.experiment_attempt_run). Claims only a still-queued attempt, and beats while it runs."""
    close_old_connections()
    if not _attempt_claim(attempt_id):
        log.warning("attempt %s is no longer queued (given up or run already); skipped", attempt_id)
        return
    attempt = Attempt.objects.get(id=attempt_id)
    experiment = experiment_get(slug=attempt.slug)
    progress, on_fired = _reporters(attempt_id)
    try:
        with _beating(attempt_id):
            if experiment is None:
                raise ValueError(f"there is no experiment called {attempt.slug!r} any more")
            result = experiment_execute(
                experiment=experiment,
                learner=attempt.learner,
                prediction=attempt.prediction.get("value"),
                timing=attempt.prediction.get("timing"),
                progress=progress,
                on_fired=on_fired,
            )
    except Exception as exc:
        log.exception("attempt %s at %s failed", attempt_id, attempt.slug)
        Attempt.objects.filter(id=attempt_id).update(
            status=Attempt.Status.FAILED,
            error="The experiment could not run: "
            + learner_text(exc, reference=f"attempt {attempt_id}")[:2000],
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
    """Give the jobs worker a moment to fire, so the attempt page opens with the live run."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        attempt.refresh_from_db()
        if attempt.runs or not attempt.is_active:
            break
        time.sleep(0.2)
    return attempt

"""A lab run and every event its tasks produced, one row per delivery (never folded by task id)."""

from __future__ import annotations

import time

from django.db import models

from teachlab.lab.runs.converters import lab_token


def new_run_id() -> str:
    """Run ids are capabilities in URLs and channel group names: unguessable, URL-safe."""
    return lab_token(16)


class RunQuerySet(models.QuerySet):
    def owned_by(self, learner) -> RunQuerySet:
        return self.filter(learner=learner)

    def running(self) -> RunQuerySet:
        return self.filter(status=Run.Status.RUNNING)


class Run(models.Model):
    """One firing of a batch of lab tasks at one lane, with the parameters it was fired with."""

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        DONE = "done", "done"  # every task settled, no copy pending
        TIMED_OUT = "timed_out", "timed out"  # deadline passed with copies unsettled
        FAILED = "failed", "failed"  # publishing failed (broker away); see `error`

    id = models.CharField(primary_key=True, max_length=32, default=new_run_id, editable=False)
    learner = models.ForeignKey(
        "lessons.Learner", on_delete=models.CASCADE, related_name="lab_runs"
    )
    lane = models.CharField(max_length=40)
    # Normalised parameters (params.RunParams): count, spacing, countdown, eta, expires,
    # duration, acks_late, guard, fail, retry.
    params = models.JSONField(default=dict)
    prediction = models.IntegerField(null=True, blank=True)  # "how many receipts?"
    label = models.CharField(max_length=120, blank=True)  # e.g. "experiment:crash", "room:K7Q2"
    # The client network that fired it (teachlab/core/identity.py: an address, an IPv6 /64), for
    # the per-network ceiling on lab load (limits.network_load_check); "" from a shell.
    network = models.CharField(max_length=64, blank=True, default="")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.RUNNING)
    error = models.TextField(blank=True)
    task_ids = models.JSONField(default=list)  # Celery task id of task i at index i
    visibility_timeout = models.FloatField(null=True, blank=True)  # the lane's, when fired
    # What the lane's workers reported running on (versions.py): broker server, celery,
    # kombu, amqp, redis-py, pool. Empty when no worker was up to say.
    versions = models.JSONField(default=dict, blank=True)
    fired_at = models.FloatField(default=time.time)  # epoch seconds, before the first publish
    published_at = models.FloatField(null=True, blank=True)  # epoch, after the last publish
    deadline = models.FloatField(null=True, blank=True)  # epoch; past it the run times out
    settled_at = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["learner", "status"]),
            models.Index(fields=["network", "status"]),
        ]

    def __str__(self) -> str:
        return f"run {self.id} on {self.lane} ({self.status})"


class RunEvent(models.Model):
    """One thing that happened to one delivery of one task, as a worker signal saw it."""

    # The one list of event kinds: workers, the recorder, summaries, pages and experiment
    # checks all use these members (`from teachlab.lab.models import Kind`).
    class Kind(models.TextChoices):
        RECEIVED = "received"  # every delivery, restored copies included
        STARTED = "started"  # task_prerun: the worker began the call (guard not yet checked)
        SUPPRESSED = "suppressed"  # the guard found the work already claimed; body skipped
        FINISHED = "finished"  # the body returned
        FAILED = "failed"  # the body raised (data.retrying when Celery will retry)
        REVOKED = "revoked"  # expired or revoked before running
        REQUEUED = "requeued"  # handed back unstarted by a warm shutdown (another copy follows)

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()  # per run, from a Redis counter: total order of events
    kind = models.CharField(max_length=12, choices=Kind.choices)
    task_id = models.CharField(max_length=64)
    index = models.PositiveIntegerField()  # the task's position in the run
    copy = models.PositiveIntegerField(default=1)  # nth delivery of this task id (1 = first)
    worker = models.CharField(max_length=120, blank=True)
    redelivered = models.BooleanField(default=False)
    at = models.FloatField()  # epoch seconds in the worker
    t = models.FloatField()  # seconds since the run was fired
    eta = models.FloatField(null=True, blank=True)  # epoch seconds the task is due
    published_at = models.FloatField(null=True, blank=True)  # epoch seconds it was published
    data = models.JSONField(default=dict, blank=True)  # what this kind of event says
    # Event fields with no column of their own, by name (teachlab/lab/eventlog/labevent.py, FIELDS).
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["run", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="lab_event_run_seq")]

    def __str__(self) -> str:
        return f"{self.kind} {self.task_id} copy {self.copy}"


Kind = RunEvent.Kind
# Kinds that end a delivery: after one of these that copy says no more. `requeued` ends it
# too (a warm shutdown handed it back; a later copy carries the task on).
SETTLING_KINDS = frozenset(
    {Kind.FINISHED, Kind.SUPPRESSED, Kind.REVOKED, Kind.FAILED, Kind.REQUEUED}
)

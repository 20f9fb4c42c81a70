"""A learner's go at one experiment: the prediction they made, the runs it fired, the verdict."""

from __future__ import annotations

from django.db import models

from teachlab.lab.runs.converters import lab_token


def new_attempt_id() -> str:
    """Attempt ids appear in URLs: unguessable, like run ids."""
    return lab_token(12)


class AttemptQuerySet(models.QuerySet):
    def owned_by(self, learner) -> AttemptQuerySet:
        return self.filter(learner=learner)


class Attempt(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "queued"  # waiting for the jobs worker (teachlab/celery.py)
        RUNNING = "running", "running"
        DONE = "done", "done"  # steps finished and checks evaluated
        FAILED = "failed", "failed"  # could not run (broker away, limits); see `error`

    id = models.CharField(primary_key=True, max_length=24, default=new_attempt_id, editable=False)
    learner = models.ForeignKey(
        "lessons.Learner", on_delete=models.CASCADE, related_name="experiment_attempts"
    )
    slug = models.CharField(max_length=80)
    # {"kind": "number", "value": 3} or {"kind": "choice", "value": "timeout-late"}
    prediction = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    runs = models.JSONField(default=dict)  # run name -> lab Run id
    step = models.CharField(max_length=200, blank=True)  # what the runner is doing now
    result = models.JSONField(default=dict)  # verdict (see runner.attempt_result)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)  # a jobs worker took it
    beat_at = models.DateTimeField(null=True, blank=True)  # its worker's last sign of life
    worker = models.CharField(max_length=200, blank=True)  # "host pid N" that carried it out
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = AttemptQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["learner", "slug"])]

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    def __str__(self) -> str:
        return f"attempt {self.id} at {self.slug} ({self.status})"

    @property
    def is_active(self) -> bool:
        """Queued or running: the page keeps polling and shows the current step."""
        return self.status in self.ACTIVE

"""Progress lives here: an anonymous learner per session cookie, merged into an account on sign-in."""

import secrets

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import models


def new_learner_key() -> str:
    return secrets.token_urlsafe(18)


class Learner(models.Model):
    """Whoever is studying: anonymous (tied to the session) until they sign in.

    Every piece of progress, every lab run and every workshop seat hangs off a Learner, so
    ownership checks compare learners, never session keys.
    """

    key = models.CharField(max_length=40, unique=True, default=new_learner_key)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # "" until the learner picks one: the visitor's theme cookie, else the system's, applies
    theme = models.CharField(max_length=6, blank=True, default="")

    def __str__(self) -> str:
        return f"learner {self.pk} ({self.user or 'anonymous'})"


# --- Quiz, self-ratings and review (issue 3) ---------------------------------------------
# Claims and questions live in lesson files, not tables, so progress rows store their stable
# keys (`<slug>` and `<slug>:<claim id>`) and survive a lesson being edited or reloaded.


class QuizAttempt(models.Model):
    """One run through a set of claims; the order is fixed by `seed`, so a reload or a
    second tab shows the same order."""

    class Kind(models.TextChoices):
        QUESTION = "question", "One question"
        MIXED = "mixed", "Mixed"
        RETRY = "retry", "Retry of missed claims"
        REVIEW = "review", "Review of due claims"

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="quiz_attempts")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    question_slug = models.CharField(max_length=100, blank=True)  # blank unless kind=question
    seed = models.PositiveIntegerField()
    claim_keys = models.JSONField(default=list)  # the claims in this attempt, before shuffling
    retry_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="retries"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"quiz attempt {self.pk} ({self.kind} {self.question_slug})".strip()


class QuizAnswer(models.Model):
    """The first answer to a claim within an attempt; the unique constraint is what makes a
    double click or a replayed request count once."""

    attempt = models.ForeignKey(QuizAttempt, on_delete=models.CASCADE, related_name="answers")
    claim_key = models.CharField(max_length=200)
    question_slug = models.CharField(max_length=100)
    said_holds = models.BooleanField()
    correct = models.BooleanField()
    answered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["answered_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["attempt", "claim_key"], name="quiz_one_answer_per_claim_per_attempt"
            )
        ]

    def __str__(self) -> str:
        return f"{self.claim_key}: {'right' if self.correct else 'wrong'}"


class SelfRating(models.Model):
    """How well the learner says they knew a tier's answer before revealing it."""

    class Rating(models.TextChoices):
        MISSED = "missed", "Missed it"
        PARTLY = "partly", "Partly"
        NAILED = "nailed", "Nailed it"

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="self_ratings")
    question_slug = models.CharField(max_length=100)
    tier = models.CharField(max_length=20)
    rating = models.CharField(max_length=10, choices=Rating.choices)
    rated_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-rated_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.question_slug}/{self.tier}: {self.rating}"


class ReviewItemQuerySet(models.QuerySet):
    def due(self, *, on):
        return self.filter(due_on__lte=on)


class ReviewItem(models.Model):
    """Spaced-repetition state of one question or claim for one learner (lessons/review.py)."""

    class Kind(models.TextChoices):
        QUESTION = "question", "Question"
        CLAIM = "claim", "Claim"

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="review_items")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    key = models.CharField(max_length=200)  # question slug or claim key
    question_slug = models.CharField(max_length=100)
    repetitions = models.PositiveIntegerField(default=0)
    easiness = models.FloatField(default=2.5)
    interval_days = models.PositiveIntegerField(default=0)
    due_on = models.DateField()
    last_reviewed_on = models.DateField()
    reviews = models.PositiveIntegerField(default=0)
    lapses = models.PositiveIntegerField(default=0)

    objects = ReviewItemQuerySet.as_manager()

    class Meta:
        ordering = ["due_on", "kind", "key"]
        constraints = [
            models.UniqueConstraint(
                fields=["learner", "kind", "key"], name="review_one_item_per_learner"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.key} due {self.due_on}"


class TierRevealQuerySet(models.QuerySet):
    def for_learner(self, learner: "Learner") -> "TierRevealQuerySet":
        return self.filter(learner=learner)


class TierReveal(models.Model):
    """A learner opened one answer tier of a question (keyed by slug: lessons live in files)."""

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="tier_reveals")
    question_slug = models.SlugField(max_length=80)
    tier = models.CharField(max_length=10)
    revealed_at = models.DateTimeField(auto_now_add=True)

    objects = TierRevealQuerySet.as_manager()

    class Meta:
        ordering = ["question_slug", "revealed_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["learner", "question_slug", "tier"], name="tier_reveal_once_per_learner"
            )
        ]

    def __str__(self) -> str:
        return f"{self.learner} revealed {self.question_slug}/{self.tier}"


# --- Progress import (issue 13) ------------------------------------------------------------


class ImportedActivity(models.Model):
    """A lab run or experiment attempt that came in with an imported progress file.

    Only its summary travels: the file holds no deliveries, so it cannot be replayed or run
    again; it counts on the progress page like the learner's own runs and attempts."""

    class Kind(models.TextChoices):
        LAB_RUN = "lab_run", "Lab run"
        EXPERIMENT = "experiment", "Experiment attempt"

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="imported_activity")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    source_id = models.CharField(max_length=64)  # the run's or attempt's id in the file
    slug = models.CharField(max_length=80, blank=True)  # the experiment (attempts only)
    happened_at = models.DateTimeField()  # fired or started
    updated_at = models.DateTimeField()  # the record's own clock: the newer copy wins
    summary = models.JSONField(default=dict)
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-happened_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["learner", "kind", "source_id"], name="imported_activity_once"
            )
        ]

    def __str__(self) -> str:
        return f"imported {self.kind} {self.source_id}"


# --- Search (issue 29) ----------------------------------------------------------------------


class SearchEntry(models.Model):
    """One searchable piece of the content: a question, a tier, a claim, a lab experiment or a
    glossary term, as plain text, with the link that opens it (lessons/search_index.py).

    Rows belong to a `corpus`, a fingerprint of the content they were made from: a search only
    reads its own corpus, so an edit (or a second server over other lessons) never shows half
    of one set mixed with another. PostgreSQL searches `document`; on SQLite the FTS5 table `lessons_searchentry_fts` (made by migration 0005) mirrors title and body."""

    class Kind(models.TextChoices):
        QUESTION = "question", "Question"
        TIER = "tier", "Answer tier"
        CLAIM = "claim", "Claim"
        EXPERIMENT = "experiment", "Lab experiment"
        TERM = "term", "Glossary term"

    corpus = models.CharField(max_length=64, db_index=True)
    key = models.CharField(max_length=200)  # e.g. "tier:<slug>:solid", unique in its corpus
    kind = models.CharField(max_length=12, choices=Kind.choices)
    title = models.TextField()
    belongs_to = models.TextField(blank=True)  # e.g. the question's title
    body = models.TextField()
    url = models.CharField(max_length=300)
    position = models.PositiveIntegerField()  # content order: breaks ties in rank
    # PostgreSQL only: title and body as a stored tsvector under a GIN index (migration 0005),
    # so a search reads the index instead of parsing every entry; empty on SQLite.
    document = SearchVectorField(null=True, editable=False)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["corpus", "key"], name="search_entry_once_per_corpus")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.key}"

"""A learner's study progress: tiers revealed (written when a tier opens, read by the index),
self-ratings, the progress page, reset, download, and the merge into an account on sign-in."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.contrib.auth.signals import user_logged_in
from django.db import transaction
from django.dispatch import receiver

from lessons import review
from lessons.catalog import Claim, Question, all_questions, get_claim, get_question
from lessons.lab_titles import lab_experiment_titles
from lessons.learners import SESSION_KEY
from lessons.models import (
    ImportedActivity,
    Learner,
    QuizAnswer,
    ReviewItem,
    SelfRating,
    TierReveal,
)
from lessons.record_nouns import counted
from lessons.schema import TIERS


def reveal_record(*, learner: Learner, slug: str, tier: str) -> list[str]:
    """Record `tier` and every tier before it as revealed (a permalink to senior shows all
    three); returns the tiers recorded."""
    upto = list(TIERS[: TIERS.index(tier) + 1])
    for name in upto:
        TierReveal.objects.get_or_create(learner=learner, question_slug=slug, tier=name)
    return upto


def revealed_tiers(*, learner: Learner) -> dict[str, set[str]]:
    """slug -> tiers this learner has revealed."""
    revealed: dict[str, set[str]] = {}
    for slug, tier in TierReveal.objects.for_learner(learner).values_list("question_slug", "tier"):
        revealed.setdefault(slug, set()).add(tier)
    return revealed


# --- Self-ratings, the progress page, reset, download, merge on sign-in (issue 3) -----------
# Everything here is keyed on the Learner, so an anonymous learner and an account behave the
# same; signing in moves the anonymous rows onto the account (progress_merge).


@dataclass(frozen=True)
class QuestionProgress:
    """One row of the progress page."""

    slug: str
    title: str
    tiers_seen: list[str]
    last_rating: SelfRating | None
    correct: int
    answered: int
    next_review: dt.date | None
    claims_due: int
    experiments_tried: int = 0
    experiments_total: int = 0

    @property
    def accuracy(self) -> int | None:
        return round(100 * self.correct / self.answered) if self.answered else None


@dataclass(frozen=True)
class ReviewRow:
    """A review item with what the page shows about it (its question or claim)."""

    item: ReviewItem
    question: Question | None
    claim: Claim | None


def rating_record(
    *, learner: Learner, question_slug: str, tier: str, rating: str, today: dt.date
) -> tuple[SelfRating, bool]:
    """Store a self-rating and grade the question's review with it; (rating, created).
    The same rating again (a double click, a resubmit) is not stored or graded twice."""
    with transaction.atomic():
        # The learner's row lock makes a double submit wait and then see the first rating.
        list(Learner.objects.select_for_update().filter(pk=learner.pk).values_list("pk"))
        latest = SelfRating.objects.filter(
            learner=learner, question_slug=question_slug, tier=tier
        ).first()
        if latest is not None and latest.rating == rating:
            return latest, False
        saved = SelfRating.objects.create(
            learner=learner, question_slug=question_slug, tier=tier, rating=rating
        )
        review.review_record(
            learner=learner,
            kind=ReviewItem.Kind.QUESTION,
            key=question_slug,
            question_slug=question_slug,
            quality=review.QUALITY[rating],
            today=today,
        )
    return saved, True


def rating_context(*, learner: Learner | None, slug: str, tier: str, saved: bool = False) -> dict:
    """What templates/lessons/_self_rating.html needs."""
    current = None
    next_review = None
    if learner is not None:
        current = SelfRating.objects.filter(learner=learner, question_slug=slug, tier=tier).first()
        item = ReviewItem.objects.filter(
            learner=learner, kind=ReviewItem.Kind.QUESTION, key=slug
        ).first()
        next_review = item.due_on if item else None
    return {
        "rating_slug": slug,
        "rating_tier": tier,
        "rating_current": current.rating if current else "",
        "rating_label": current.get_rating_display().lower() if current else "",
        "rating_choices": SelfRating.Rating.choices,
        "rating_saved": saved,
        "rating_next_review": next_review,
    }


def review_rows(items) -> list[ReviewRow]:
    """Review items joined to their lesson text; items whose lesson is gone are left out."""
    rows = []
    for item in items:
        question = get_question(item.question_slug)
        claim = get_claim(item.key) if item.kind == ReviewItem.Kind.CLAIM else None
        if question is None or (item.kind == ReviewItem.Kind.CLAIM and claim is None):
            continue
        rows.append(ReviewRow(item=item, question=question, claim=claim))
    return rows


def progress_summary(*, learner: Learner, today: dt.date) -> list[QuestionProgress]:
    """Per question: tiers seen, last self-rating, quiz accuracy, next review date."""
    seen = revealed_tiers(learner=learner)
    ratings: dict[str, SelfRating] = {}
    for rating in SelfRating.objects.filter(learner=learner):  # newest first
        ratings.setdefault(rating.question_slug, rating)
    accuracy: dict[str, tuple[int, int]] = {}
    for slug, correct in QuizAnswer.objects.filter(attempt__learner=learner).values_list(
        "question_slug", "correct"
    ):
        right, total = accuracy.get(slug, (0, 0))
        accuracy[slug] = (right + correct, total + 1)
    next_review: dict[str, dt.date] = {}
    claims_due: dict[str, int] = {}
    for item in ReviewItem.objects.filter(learner=learner):
        slug = item.question_slug
        if slug not in next_review or item.due_on < next_review[slug]:
            next_review[slug] = item.due_on
        if item.kind == ReviewItem.Kind.CLAIM and item.due_on <= today:
            claims_due[slug] = claims_due.get(slug, 0) + 1
    tried = experiments_tried(learner=learner)
    return [
        QuestionProgress(
            slug=q.slug,
            title=q.title,
            tiers_seen=[t for t in TIERS if t in seen.get(q.slug, set())],
            last_rating=ratings.get(q.slug),
            correct=accuracy.get(q.slug, (0, 0))[0],
            answered=accuracy.get(q.slug, (0, 0))[1],
            next_review=next_review.get(q.slug),
            claims_due=claims_due.get(q.slug, 0),
            experiments_tried=len(tried & set(q.experiments)),
            experiments_total=len(q.experiments),
        )
        for q in all_questions()
    ]


# --- The overall summary: questions, quizzes, lab runs and experiments (issue 13) ----------


def _is_experiment_run(label: str) -> bool:
    # Runs an experiment fires are labelled "experiment:<slug>:<run>" (experiments/runner.py).
    return label.startswith("experiment:")


def experiments_tried(*, learner: Learner) -> set[str]:
    """Slugs of the experiments this learner has attempted, here or in an imported file."""
    own = set(learner.experiment_attempts.values_list("slug", flat=True))
    imported = set(
        learner.imported_activity.filter(kind=ImportedActivity.Kind.EXPERIMENT).values_list(
            "slug", flat=True
        )
    )
    return own | imported


@dataclass(frozen=True)
class Overview:
    """The top of the progress page: one line each for questions, quizzes, review, lab runs
    and experiments. Imported run and attempt summaries count like the learner's own."""

    questions: int
    questions_started: int
    questions_read: int  # every tier revealed
    quiz_attempts: int
    quiz_answered: int
    quiz_correct: int
    review_due: int
    lab_runs: int
    lab_runs_imported: int
    experiments: int  # in the lab's catalog
    experiments_tried: int
    experiments_passed: int  # an attempt whose checks all passed
    experiment_attempts: int
    predictions_right: int

    @property
    def quiz_accuracy(self) -> int | None:
        return round(100 * self.quiz_correct / self.quiz_answered) if self.quiz_answered else None


def _attempt_outcome(result: dict) -> tuple[bool, bool]:
    """(checks passed, prediction right) from a stored verdict (experiments/runner.py)."""
    result = result if isinstance(result, dict) else {}
    prediction = result.get("prediction") if isinstance(result.get("prediction"), dict) else {}
    return bool(result.get("passed")), bool(prediction.get("matched"))


def progress_overview(*, learner: Learner, today: dt.date) -> Overview:
    seen = revealed_tiers(learner=learner)
    slugs = {q.slug for q in all_questions()}
    answers = QuizAnswer.objects.filter(attempt__learner=learner)
    runs = learner.lab_runs.values_list("id", "label")
    own_runs = {run_id for run_id, label in runs if not _is_experiment_run(label)}
    imported_runs = {
        item.source_id
        for item in learner.imported_activity.filter(kind=ImportedActivity.Kind.LAB_RUN)
        if item.source_id not in own_runs
        and not _is_experiment_run(str((item.summary or {}).get("label") or ""))
    }
    outcomes: list[tuple[str, bool, bool]] = []  # (slug, passed, prediction right)
    own_attempts = set()
    for attempt_id, slug, status, result in learner.experiment_attempts.values_list(
        "id", "slug", "status", "result"
    ):
        own_attempts.add(attempt_id)
        passed, right = _attempt_outcome(result) if status == "done" else (False, False)
        outcomes.append((slug, passed, right))
    for item in learner.imported_activity.filter(kind=ImportedActivity.Kind.EXPERIMENT):
        if item.source_id not in own_attempts:
            summary = item.summary or {}
            outcomes.append(
                (item.slug, bool(summary.get("passed")), bool(summary.get("prediction_right")))
            )
    catalog = lab_experiment_titles() or {}
    return Overview(
        questions=len(slugs),
        questions_started=sum(1 for slug in slugs if seen.get(slug)),
        questions_read=sum(1 for slug in slugs if len(seen.get(slug, ())) == len(TIERS)),
        quiz_attempts=learner.quiz_attempts.count(),
        quiz_answered=answers.count(),
        quiz_correct=answers.filter(correct=True).count(),
        review_due=review.review_due(learner=learner, today=today).count(),
        lab_runs=len(own_runs) + len(imported_runs),
        lab_runs_imported=len(imported_runs),
        experiments=len(catalog),
        experiments_tried=len({slug for slug, _, _ in outcomes}),
        experiments_passed=len({slug for slug, passed, _ in outcomes if passed}),
        experiment_attempts=len(outcomes),
        predictions_right=sum(1 for _, _, right in outcomes if right),
    )


def progress_counts(*, learner: Learner) -> list[str]:
    """What a reset would delete, for the confirmation page ("1 self-rating", "2 quiz answers")."""
    counts = {
        "tiers revealed": learner.tier_reveals.count(),
        "self-ratings": learner.self_ratings.count(),
        "quiz attempts": learner.quiz_attempts.count(),
        "quiz answers": QuizAnswer.objects.filter(attempt__learner=learner).count(),
        "review items": learner.review_items.count(),
        "imported lab and experiment summaries": learner.imported_activity.count(),
    }
    return [counted(kind, n) for kind, n in counts.items()]


def progress_reset(*, learner: Learner) -> None:
    """Forget this learner's study progress; lab runs and workshop seats are not progress
    (run and attempt summaries that came in with an imported file are, and go)."""
    with transaction.atomic():
        learner.imported_activity.all().delete()
        learner.tier_reveals.all().delete()
        learner.self_ratings.all().delete()
        learner.quiz_attempts.all().delete()  # answers go with them
        learner.review_items.all().delete()


def progress_merge(*, source: Learner, target: Learner) -> None:
    """Move an anonymous learner's progress onto the account's learner.

    Attempts, answers and ratings are history and simply move. A tier revealed on either
    side stays revealed. When both sides schedule the same review item, the one reviewed
    more recently wins: it is the better guess of what the learner remembers now.
    """
    with transaction.atomic():
        source.quiz_attempts.update(learner=target)
        source.self_ratings.update(learner=target)
        have = set(target.tier_reveals.values_list("question_slug", "tier"))
        for reveal in source.tier_reveals.all():
            if (reveal.question_slug, reveal.tier) not in have:
                reveal.learner = target
                reveal.save(update_fields=["learner"])
        theirs = {(i.kind, i.key): i for i in target.review_items.all()}
        for item in source.review_items.all():
            kept = theirs.get((item.kind, item.key))
            if kept is not None:
                if kept.last_reviewed_on > item.last_reviewed_on:
                    continue
                kept.delete()
            item.learner = target
            item.save(update_fields=["learner"])
        # Lab runs and guided-experiment attempts belong to whoever fired them: they follow
        # the learner into the account, so the runs page on any device lists them.
        source.lab_runs.update(learner=target)
        source.experiment_attempts.update(learner=target)
        mine = {(a.kind, a.source_id): a for a in target.imported_activity.all()}
        for activity in source.imported_activity.all():
            kept = mine.get((activity.kind, activity.source_id))
            if kept is not None:
                if kept.updated_at >= activity.updated_at:
                    continue
                kept.delete()
            activity.learner = target
            activity.save(update_fields=["learner"])


@receiver(user_logged_in, dispatch_uid="lessons.progress.merge_on_sign_in")
def merge_on_sign_in(sender, request, user, **kwargs) -> None:
    """Signing in keeps what this browser did anonymously: it joins the account's progress.
    The anonymous learner row stays, empty; workshop seats are tied to a seat cookie, not to it."""
    session = getattr(request, "session", None)
    key = session.get(SESSION_KEY) if session is not None else None
    anonymous = Learner.objects.filter(key=key, user__isnull=True).first() if key else None
    if anonymous is None:
        return
    account = Learner.objects.filter(user=user).first()
    if account is None:
        # The first sign-in of this account: the anonymous learner simply becomes it.
        anonymous.user = user
        anonymous.save(update_fields=["user"])
        return
    progress_merge(source=anonymous, target=account)
    session[SESSION_KEY] = account.key

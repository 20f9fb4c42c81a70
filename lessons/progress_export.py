"""The progress download: everything progress holds about one learner as JSON-ready data, in
the `teachlab-progress/1` format that lessons/progress_file.py checks on the way back in."""

from __future__ import annotations

import datetime as dt

from lessons.models import Learner
from lessons.progress_file import (
    ACTIVITY_NOTE,
    FORMAT,
    experiment_attempts_export,
    iso_or_none,
    lab_runs_export,
)
from lessons.quiz import ordered_keys


def progress_export(*, learner: Learner, now: dt.datetime) -> dict:
    """Everything progress holds about this learner, as plain JSON-ready data."""
    return {
        "format": FORMAT,
        "note": ACTIVITY_NOTE,
        "exported_at": iso_or_none(now),
        "account": learner.user.get_username() if learner.user_id else None,
        "learner_since": iso_or_none(learner.created_at),
        "tiers_revealed": [
            {"question": r.question_slug, "tier": r.tier, "revealed_at": iso_or_none(r.revealed_at)}
            for r in learner.tier_reveals.order_by("revealed_at")
        ],
        "self_ratings": [
            {
                "question": r.question_slug,
                "tier": r.tier,
                "rating": r.rating,
                "rated_at": iso_or_none(r.rated_at),
            }
            for r in learner.self_ratings.order_by("rated_at")
        ],
        "quiz_attempts": quiz_attempts_export(learner=learner),
        "review": [
            {
                "kind": i.kind,
                "key": i.key,
                "due_on": iso_or_none(i.due_on),
                "last_reviewed_on": iso_or_none(i.last_reviewed_on),
                "interval_days": i.interval_days,
                "repetitions": i.repetitions,
                "easiness": round(i.easiness, 3),
                "reviews": i.reviews,
                "lapses": i.lapses,
            }
            for i in learner.review_items.order_by("due_on", "key")
        ],
        "lab_runs": lab_runs_export(learner=learner),
        "experiment_attempts": experiment_attempts_export(learner=learner),
    }


def quiz_attempts_export(*, learner: Learner) -> list[dict]:
    """Each quiz attempt with its claims in the order shown and every answer given."""
    attempts = []
    for attempt in learner.quiz_attempts.prefetch_related("answers").order_by("created_at"):
        answers = list(attempt.answers.all())
        attempts.append(
            {
                "id": attempt.pk,
                "kind": attempt.kind,
                "question": attempt.question_slug or None,
                "retry_of": attempt.retry_of_id,
                "started_at": iso_or_none(attempt.created_at),
                "claims_in_order": ordered_keys(claim_keys=attempt.claim_keys, seed=attempt.seed),
                "answers": [
                    {
                        "claim": a.claim_key,
                        "said": "holds up" if a.said_holds else "costs you the question",
                        "correct": a.correct,
                        "answered_at": iso_or_none(a.answered_at),
                    }
                    for a in answers
                ],
                "score": {
                    "correct": sum(a.correct for a in answers),
                    "answered": len(answers),
                    "total": len(attempt.claim_keys),
                },
            }
        )
    return attempts

"""Spaced repetition: when a question or a claim comes back for review.

The schedule is SM-2 (Wozniak, SuperMemo 2, 1987) with two changes, both so that the review
page brings back what the learner got wrong and not what they already knew:

- a lapse (grade below 3) makes the item due again today (interval 0), where SM-2 waits a day;
- an item known at first sight (grade 5 on its very first review) waits 4 days, not 1, the
  way Anki treats "easy" on a new card; a claim missed and then answered right waits 1 day.

Everything else is SM-2: the second successful review in a row waits 6 days, later ones
multiply the interval by the item's easiness factor, and every grade moves the easiness
factor (floor 1.3), lapses included as most SM-2 implementations do, so a claim missed once
keeps coming back sooner than one that was known.

Grades are SM-2's 0-5 quality scale; below 3 is a lapse. Quiz answers grade claims,
self-ratings after a tier reveal grade questions (see `QUALITY`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db import transaction

from lessons.models import Learner, ReviewItem

MIN_EASINESS = 1.3
START_EASINESS = 2.5
PASS = 3  # grades below this are lapses
FIRST_SIGHT_DAYS = 4  # known without ever being wrong: no need to see it tomorrow

QUALITY = {
    # Quiz answers.
    "correct": 5,
    "wrong": 1,
    # Self-ratings after revealing a tier of an answer.
    "nailed": 5,
    "partly": 3,
    "missed": 1,
}


@dataclass(frozen=True)
class Schedule:
    """Where an item stands: SM-2's repetition count n, easiness EF and interval I, and how
    many reviews it has had at all (0: never seen)."""

    repetitions: int = 0
    easiness: float = START_EASINESS
    interval_days: int = 0
    reviews: int = 0


def next_easiness(*, easiness: float, quality: int) -> float:
    """SM-2's easiness update: a 5 raises it by 0.1, a 4 keeps it, lower grades cut it."""
    miss = 5 - quality
    return max(MIN_EASINESS, easiness + 0.1 - miss * (0.08 + miss * 0.02))


def schedule_next(*, schedule: Schedule, quality: int) -> Schedule:
    """The schedule after one graded review."""
    if not 0 <= quality <= 5:
        raise ValueError(f"quality must be 0..5, got {quality}")
    easiness = next_easiness(easiness=schedule.easiness, quality=quality)
    if quality < PASS:
        # Departure from SM-2: back today, not tomorrow.
        return Schedule(0, easiness, 0, schedule.reviews + 1)
    repetitions = schedule.repetitions + 1
    if repetitions == 1:
        # Departure from SM-2: known at first sight waits longer than relearned.
        interval = FIRST_SIGHT_DAYS if schedule.reviews == 0 and quality == 5 else 1
    elif repetitions == 2:
        interval = 6
    else:
        interval = max(1, round(schedule.interval_days * easiness))
    return Schedule(repetitions, easiness, interval, schedule.reviews + 1)


def due_date(*, schedule: Schedule, reviewed_on: dt.date) -> dt.date:
    return reviewed_on + dt.timedelta(days=schedule.interval_days)


@transaction.atomic
def review_record(
    *, learner: Learner, kind: str, key: str, question_slug: str, quality: int, today: dt.date
) -> ReviewItem:
    """Grade one review of a question or claim and store when it comes back.

    The item's row lock (until the caller's transaction ends) keeps two grades from one learner (two
    tabs) from both reading the old schedule and one of them being lost."""
    item = (
        ReviewItem.objects.select_for_update().filter(learner=learner, kind=kind, key=key).first()
    )
    before = (
        Schedule(item.repetitions, item.easiness, item.interval_days, item.reviews)
        if item
        else Schedule()
    )
    after = schedule_next(schedule=before, quality=quality)
    values = {
        "question_slug": question_slug,
        "repetitions": after.repetitions,
        "easiness": after.easiness,
        "interval_days": after.interval_days,
        "due_on": due_date(schedule=after, reviewed_on=today),
        "last_reviewed_on": today,
        "reviews": after.reviews,
        "lapses": (item.lapses if item else 0) + (quality < PASS),
    }
    if item is None:
        return ReviewItem.objects.create(learner=learner, kind=kind, key=key, **values)
    for name, value in values.items():
        setattr(item, name, value)
    item.save()
    return item


def review_due(*, learner: Learner, today: dt.date):
    """What to review today: questions first, then claims, most overdue first."""
    # "-kind": "question" sorts after "claim", so descending puts questions first.
    due = ReviewItem.objects.due(on=today).filter(learner=learner)
    return due.order_by("-kind", "due_on", "key")


def review_upcoming(*, learner: Learner, today: dt.date, days: int = 14):
    """What comes back after today, within `days`, soonest first."""
    return ReviewItem.objects.filter(
        learner=learner, due_on__gt=today, due_on__lte=today + dt.timedelta(days=days)
    ).order_by("due_on", "kind", "key")

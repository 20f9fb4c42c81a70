"""The spaced-repetition schedule (SM-2 with a same-day return for lapses)."""

import datetime as dt

import pytest

from lessons.models import Learner, ReviewItem
from lessons.review import (
    FIRST_SIGHT_DAYS,
    MIN_EASINESS,
    QUALITY,
    Schedule,
    review_due,
    review_record,
    review_upcoming,
    schedule_next,
)

TODAY = dt.date(2026, 12, 2)


def run(grades: list[int]) -> Schedule:
    schedule = Schedule()
    for grade in grades:
        schedule = schedule_next(schedule=schedule, quality=grade)
    return schedule


def test_item_known_at_first_sight_comes_back_after_four_days_then_six_then_growing_gaps():
    intervals = []
    schedule = Schedule()
    for _ in range(5):
        schedule = schedule_next(schedule=schedule, quality=5)
        intervals.append(schedule.interval_days)
    assert intervals[:2] == [FIRST_SIGHT_DAYS, 6]
    assert intervals[2] > 6 and intervals[3] > intervals[2] and intervals[4] > intervals[3]


def test_partly_known_new_item_and_relearned_item_come_back_the_next_day():
    assert run([3]).interval_days == 1
    assert run([1, 5]).interval_days == 1
    assert run([5, 1, 5]).interval_days == 1


def test_missed_item_is_due_again_the_same_day():
    after = schedule_next(schedule=run([5, 5, 5]), quality=QUALITY["wrong"])
    assert after.interval_days == 0
    assert after.repetitions == 0


def test_missed_claim_comes_back_sooner_than_a_known_one_for_weeks_after():
    known = run([5, 5, 5, 5])
    missed_once = run([1, 5, 5, 5])
    assert missed_once.interval_days < known.interval_days
    assert missed_once.easiness < known.easiness


def test_partly_known_grows_slower_than_nailed():
    assert run([3, 3, 3, 3]).interval_days < run([5, 5, 5, 5]).interval_days


def test_easiness_never_drops_below_the_floor():
    assert run([0] * 20).easiness == pytest.approx(MIN_EASINESS)


def test_grade_outside_zero_to_five_is_refused():
    with pytest.raises(ValueError):
        schedule_next(schedule=Schedule(), quality=6)


@pytest.mark.django_db
def test_recorded_miss_is_due_today_and_recorded_hit_tomorrow():
    learner = Learner.objects.create()
    common = {
        "learner": learner,
        "kind": ReviewItem.Kind.CLAIM,
        "question_slug": "q",
        "today": TODAY,
    }
    missed = review_record(key="q:a", quality=QUALITY["wrong"], **common)
    known = review_record(key="q:b", quality=QUALITY["correct"], **common)
    assert missed.due_on == TODAY and missed.lapses == 1
    assert known.due_on == TODAY + dt.timedelta(days=FIRST_SIGHT_DAYS) and known.lapses == 0
    assert [i.key for i in review_due(learner=learner, today=TODAY)] == ["q:a"]
    assert [i.key for i in review_upcoming(learner=learner, today=TODAY)] == ["q:b"]


@pytest.mark.django_db
def test_a_missed_claim_answered_right_later_moves_to_tomorrow_and_keeps_its_lapse():
    learner = Learner.objects.create()
    common = {"learner": learner, "kind": ReviewItem.Kind.CLAIM, "key": "q:a", "question_slug": "q"}
    review_record(quality=QUALITY["wrong"], today=TODAY, **common)
    item = review_record(quality=QUALITY["correct"], today=TODAY, **common)
    assert item.due_on == TODAY + dt.timedelta(days=1)
    assert (item.reviews, item.lapses) == (2, 1)
    assert ReviewItem.objects.filter(learner=learner).count() == 1


@pytest.mark.django_db
def test_review_queues_are_per_learner():
    mine, theirs = Learner.objects.create(), Learner.objects.create()
    review_record(
        learner=theirs, kind="claim", key="q:a", question_slug="q", quality=1, today=TODAY
    )
    assert list(review_due(learner=mine, today=TODAY)) == []

"""Storing a quiz answer (lessons/quiz.py: parse_answer, answer_record): what is refused and
why, what one answer stores (the row and the claim's review schedule), and that a repeat
changes nothing."""

from __future__ import annotations

import datetime as dt

import pytest

from lessons import quiz
from lessons.catalog import get_claim, get_question
from lessons.models import Learner, QuizAnswer, ReviewItem
from tests.lessons.quiz_support import ALPHA, BETA, QUIZ_FIXTURES

pytestmark = pytest.mark.django_db
TODAY = dt.date(2026, 12, 3)


@pytest.fixture(autouse=True)
def quiz_lessons(settings):
    settings.LESSONS_DIR = QUIZ_FIXTURES


@pytest.fixture
def attempt():
    return quiz.attempt_start(learner=Learner.objects.create(), question_slug=ALPHA)


def _claim(holds: bool):
    return next(c for c in get_question(ALPHA).claims if c.holds == holds)


def test_the_two_answers_parse_and_anything_else_is_refused_with_a_400():
    assert quiz.parse_answer("holds") is True
    assert quiz.parse_answer("costs") is False
    for bad in [None, "", "Holds", "holds ", "true", "1"]:
        with pytest.raises(quiz.QuizError) as refused:
            quiz.parse_answer(bad)
        assert refused.value.status == 400
        assert refused.value.message == "Choose “holds up” or “costs you the question”."


def _record(attempt, claim_key: str, said_holds: bool):
    return quiz.answer_record(
        attempt=attempt, claim_key=claim_key, said_holds=said_holds, today=TODAY
    )


def test_a_claim_that_does_not_exist_is_a_404_and_stores_nothing(attempt):
    with pytest.raises(quiz.UnknownClaim) as refused:
        _record(attempt, f"{ALPHA}:no-such-claim", True)
    assert refused.value.status == 404
    assert refused.value.message == "There is no such claim in the lessons."
    assert not QuizAnswer.objects.exists() and not ReviewItem.objects.exists()


def test_a_real_claim_of_another_question_is_a_400_and_stores_nothing(attempt):
    other = get_question(BETA).claims[0].key
    with pytest.raises(quiz.ClaimNotInAttempt) as refused:
        _record(attempt, other, True)
    assert refused.value.status == 400
    assert refused.value.message == "That claim is not part of this quiz attempt."
    assert not QuizAnswer.objects.exists() and not ReviewItem.objects.exists()


def test_a_claim_removed_from_the_lessons_since_the_attempt_cannot_be_checked(attempt):
    attempt.claim_keys = [*attempt.claim_keys, f"{ALPHA}:removed"]
    attempt.save()
    with pytest.raises(quiz.UnknownClaim) as refused:
        _record(attempt, f"{ALPHA}:removed", True)
    assert refused.value.message == (
        "That claim is no longer in the lessons, so it cannot be checked."
    )
    assert not QuizAnswer.objects.exists()


@pytest.mark.parametrize(("holds", "said", "correct"), [(True, True, True), (True, False, False), (False, False, True), (False, True, False)])  # fmt: skip
def test_one_answer_stores_the_row_and_schedules_the_claims_review(attempt, holds, said, correct):
    claim = _claim(holds)
    answer, created = _record(attempt, claim.key, said)
    assert created is True
    stored = QuizAnswer.objects.get()
    assert stored.pk == answer.pk
    assert (stored.attempt_id, stored.claim_key, stored.question_slug) == (
        attempt.pk,
        claim.key,
        ALPHA,
    )
    assert (stored.said_holds, stored.correct) == (said, correct)
    item = ReviewItem.objects.get()
    assert (item.learner_id, item.kind, item.key, item.question_slug) == (
        attempt.learner_id,
        ReviewItem.Kind.CLAIM,
        claim.key,
        ALPHA,
    )
    assert item.reviews == 1 and item.last_reviewed_on == TODAY
    # Right at first sight waits four days; wrong comes back the same day (lessons/review.py).
    assert item.due_on == (TODAY + dt.timedelta(days=4) if correct else TODAY)
    assert item.lapses == (0 if correct else 1)


def test_a_second_answer_to_the_same_item_returns_the_first_and_changes_nothing(attempt):
    claim = _claim(True)
    first, _ = _record(attempt, claim.key, True)
    item = ReviewItem.objects.get()
    again, created = _record(attempt, claim.key, False)
    assert created is False
    assert again.pk == first.pk and again.said_holds is True and again.correct is True
    assert QuizAnswer.objects.count() == 1
    after = ReviewItem.objects.get()
    assert (after.reviews, after.due_on, after.lapses) == (item.reviews, item.due_on, item.lapses)


def test_answers_to_different_items_are_kept_apart(attempt):
    right, wrong = _claim(True), _claim(False)
    _record(attempt, right.key, True)
    _record(attempt, wrong.key, True)
    rows = dict(QuizAnswer.objects.values_list("claim_key", "correct"))
    assert rows == {right.key: True, wrong.key: False}
    assert get_claim(right.key).holds and not get_claim(wrong.key).holds


def test_a_repeat_is_answered_from_the_first_answer_without_trying_to_write(attempt):
    """The read comes first: a repeat never reaches the insert (and the constraint that
    catches the race is the last line of defence, not the usual path)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    claim = _claim(False)
    _record(attempt, claim.key, False)
    with CaptureQueriesContext(connection) as queries:
        _record(attempt, claim.key, True)
    writes = [q["sql"] for q in queries.captured_queries if not q["sql"].startswith("SELECT")]
    assert writes == []

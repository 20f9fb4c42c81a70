"""One answer per quiz item, decided by the database, not by timing: a second submit that slips
in between the service's "already answered?" read and its insert must still leave one answer.

The race is made to happen every time: a query wrapper stores the rival answer right after the
service's read finds nothing, which is exactly what a second request would do on another core."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction

from lessons import quiz
from lessons.catalog import get_claim
from lessons.models import Learner, QuizAnswer, ReviewItem
from tests.lessons.quiz_support import ALPHA, QUIZ_FIXTURES

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quiz_lessons(settings):
    settings.LESSONS_DIR = QUIZ_FIXTURES


def _attempt():
    return quiz.attempt_start(learner=Learner.objects.create(), question_slug=ALPHA)


class RivalAfterRead:
    """Stores a rival answer once, just after the first read of the quiz's answers."""

    def __init__(self, attempt, claim_key: str) -> None:
        self.attempt, self.claim_key, self.done = attempt, claim_key, False

    def __call__(self, execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if not self.done and sql.lstrip().upper().startswith("SELECT") and "quizanswer" in sql:
            self.done = True
            claim = get_claim(self.claim_key)
            QuizAnswer.objects.create(
                attempt=self.attempt,
                claim_key=self.claim_key,
                question_slug=claim.question_slug,
                said_holds=not claim.holds,
                correct=False,
            )
        return result


def test_an_answer_that_races_past_the_check_is_stored_once_and_the_first_counts():
    attempt = _attempt()
    key = f"{ALPHA}:cost-1"
    rival = RivalAfterRead(attempt, key)
    with connection.execute_wrapper(rival):
        answer, created = quiz.answer_record(
            attempt=attempt, claim_key=key, said_holds=False, today=dt.date.today()
        )
    assert rival.done, "the race was not staged"
    assert created is False
    assert QuizAnswer.objects.filter(attempt=attempt, claim_key=key).count() == 1
    assert answer.correct is False  # the rival's (wrong) answer, stored first, is the one
    # Nothing half-written: the losing request graded nothing.
    assert not ReviewItem.objects.filter(key=key).exists()


def test_the_database_refuses_a_second_answer_to_the_same_item():
    attempt = _attempt()
    key = f"{ALPHA}:hold-1"
    fields = {"attempt": attempt, "claim_key": key, "question_slug": ALPHA, "correct": True}
    QuizAnswer.objects.create(said_holds=True, **fields)
    with pytest.raises(IntegrityError), transaction.atomic():
        QuizAnswer.objects.create(said_holds=False, **fields)
    other = _attempt()
    QuizAnswer.objects.create(**{**fields, "attempt": other, "said_holds": True})
    assert QuizAnswer.objects.filter(claim_key=key).count() == 2


def test_the_models_and_the_migrations_agree():
    """A constraint dropped from a model (or added) without a migration fails here."""
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)

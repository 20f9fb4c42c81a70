"""The "costs you the question" quiz: attempts, their stable shuffled order, answers, scores.

Each item is one claim from the lesson files; the learner says whether it holds up or costs
the question. An attempt stores the claim keys it was built from and a seed, so its order is
the same on every load, and answers are keyed on (attempt, claim) so one counts per item.
"""

from __future__ import annotations

import datetime as dt
import random
import secrets
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from lessons import review
from lessons.catalog import Claim, all_claims, get_claim, get_question
from lessons.models import Learner, QuizAnswer, QuizAttempt, ReviewItem

# A mixed quiz is a sample across every question: long enough to cover several questions,
# short enough to finish in a few minutes. A third of it holds up, so answering
# "costs you the question" every time scores about two in three, not full marks.
MIXED_COST = 8
MIXED_HOLD = 4
REVIEW_MAX = 20


class QuizError(Exception):
    """A request the quiz refuses; `status` is the HTTP status a view answers with."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnknownQuestion(QuizError):
    status = 404


class UnknownAttempt(QuizError):
    status = 404


class UnknownClaim(QuizError):
    status = 404


class ClaimNotInAttempt(QuizError):
    status = 400


class NothingToQuiz(QuizError):
    status = 400


@dataclass(frozen=True)
class Item:
    """One claim of an attempt as the page shows it: its place, the claim, the answer if any."""

    number: int
    key: str
    claim: Claim | None  # None if the claim was removed from the lessons since
    answer: QuizAnswer | None


@dataclass(frozen=True)
class Score:
    correct: int
    answered: int
    total: int
    missed: list[Item]
    unanswered: list[Item]

    @property
    def finished(self) -> bool:
        return self.answered == self.total

    @property
    def percent(self) -> int:
        return round(100 * self.correct / self.answered) if self.answered else 0


def new_seed() -> int:
    return secrets.randbelow(2**31)


def ordered_keys(*, claim_keys: list[str], seed: int) -> list[str]:
    """The attempt's claims in the order the learner sees them: the same for the same seed."""
    keys = list(claim_keys)
    random.Random(seed).shuffle(keys)
    return keys


def _round_robin(groups: list[list[str]], count: int) -> list[str]:
    """Up to `count` keys taken one group at a time, so every group gets its turn."""
    picked: list[str] = []
    queues = [list(g) for g in groups if g]
    while queues and len(picked) < count:
        for queue in list(queues):
            if len(picked) == count:
                break
            picked.append(queue.pop())
            if not queue:
                queues.remove(queue)
    return picked


def pick_mixed(*, claims: list[Claim], seed: int) -> list[str]:
    """A sample of claims spread across the questions, cost and hold mixed (MIXED_COST)."""
    rng = random.Random(seed)
    slugs = sorted({c.question_slug for c in claims})
    rng.shuffle(slugs)

    def groups(holds: bool) -> list[list[str]]:
        result = []
        for slug in slugs:
            keys = [c.key for c in claims if c.question_slug == slug and c.holds == holds]
            rng.shuffle(keys)
            result.append(keys)
        return result

    cost = _round_robin(groups(False), MIXED_COST)
    # Holds start where the cost claims stopped, so they come from the other questions first.
    offset = MIXED_COST % len(slugs) if slugs else 0
    hold_groups = groups(True)
    return cost + _round_robin(hold_groups[offset:] + hold_groups[:offset], MIXED_HOLD)


def attempt_start(*, learner: Learner, question_slug: str | None) -> QuizAttempt:
    """A new attempt over every claim of one question, or a mixed one when slug is None."""
    seed = new_seed()
    if question_slug:
        question = get_question(question_slug)
        if question is None:
            raise UnknownQuestion(f"There is no question called “{question_slug}”.")
        keys = [c.key for c in question.claims]
        kind, slug = QuizAttempt.Kind.QUESTION, question.slug
    else:
        keys = pick_mixed(claims=all_claims(), seed=seed)
        kind, slug = QuizAttempt.Kind.MIXED, ""
    if not keys:
        raise NothingToQuiz("There are no claims to quiz on yet.")
    return QuizAttempt.objects.create(
        learner=learner, kind=kind, question_slug=slug, seed=seed, claim_keys=keys
    )


def attempt_retry(*, attempt: QuizAttempt) -> QuizAttempt:
    """A new attempt over the claims this one got wrong."""
    wrong = attempt.answers.filter(correct=False).order_by("pk").values_list("claim_key", flat=True)
    # A claim taken out of the lessons since cannot be asked again.
    missed = [key for key in wrong if get_claim(key) is not None]
    if not missed:
        if wrong:
            raise NothingToQuiz(
                "The claims you missed have been taken out of the lessons since, "
                "so there is nothing to retry."
            )
        raise NothingToQuiz("You missed nothing in that attempt, so there is nothing to retry.")
    return QuizAttempt.objects.create(
        learner=attempt.learner,
        kind=QuizAttempt.Kind.RETRY,
        question_slug=attempt.question_slug,
        seed=new_seed(),
        claim_keys=missed,
        retry_of=attempt,
    )


def attempt_review(*, learner: Learner, today: dt.date) -> QuizAttempt:
    """A new attempt over the claims due for review today, most overdue first."""
    keys = [
        key
        for key in ReviewItem.objects.due(on=today)
        .filter(learner=learner, kind=ReviewItem.Kind.CLAIM)
        .order_by("due_on", "key")
        .values_list("key", flat=True)
        if get_claim(key) is not None
    ][:REVIEW_MAX]
    if not keys:
        raise NothingToQuiz("No claims are due for review today.")
    return QuizAttempt.objects.create(
        learner=learner, kind=QuizAttempt.Kind.REVIEW, seed=new_seed(), claim_keys=keys
    )


def attempt_for(*, learner: Learner, attempt_id: int) -> QuizAttempt | None:
    """The learner's own attempt, or None: someone else's attempt looks like a missing one."""
    if not 0 < attempt_id < 2**63:  # SQLite integers are 64-bit; a longer id is simply missing
        return None
    return QuizAttempt.objects.filter(pk=attempt_id, learner=learner).first()


def attempt_items(*, attempt: QuizAttempt) -> list[Item]:
    answers = {a.claim_key: a for a in attempt.answers.all()}
    return [
        Item(number=i, key=key, claim=get_claim(key), answer=answers.get(key))
        for i, key in enumerate(ordered_keys(claim_keys=attempt.claim_keys, seed=attempt.seed), 1)
    ]


def attempt_item(*, attempt: QuizAttempt, claim_key: str) -> Item:
    for item in attempt_items(attempt=attempt):
        if item.key == claim_key:
            return item
    raise ClaimNotInAttempt("That claim is not part of this quiz attempt.")


def score_items(items: list[Item]) -> Score:
    """Accuracy only: right answers out of items answered, with the misses to explain."""
    answered = [i for i in items if i.answer is not None]
    return Score(
        correct=sum(1 for i in answered if i.answer.correct),
        answered=len(answered),
        total=len(items),
        missed=[i for i in answered if not i.answer.correct],
        unanswered=[i for i in items if i.answer is None],
    )


def attempt_score(*, attempt: QuizAttempt) -> Score:
    return score_items(attempt_items(attempt=attempt))


def parse_answer(value: str | None) -> bool:
    """The form's answer as "does the learner say it holds up?"."""
    if value == "holds":
        return True
    if value == "costs":
        return False
    raise QuizError("Choose “holds up” or “costs you the question”.")


def answer_record(
    *, attempt: QuizAttempt, claim_key: str, said_holds: bool, today: dt.date
) -> tuple[QuizAnswer, bool]:
    """Check and store an answer; (answer, created). A repeat returns the first answer
    unchanged and grades nothing, whatever it says: one answer counts per item."""
    claim = get_claim(claim_key)
    if claim_key not in attempt.claim_keys:
        if claim is None:
            raise UnknownClaim("There is no such claim in the lessons.")
        raise ClaimNotInAttempt("That claim is not part of this quiz attempt.")
    if claim is None:
        raise UnknownClaim("That claim is no longer in the lessons, so it cannot be checked.")
    existing = attempt.answers.filter(claim_key=claim_key).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            answer = QuizAnswer.objects.create(
                attempt=attempt,
                claim_key=claim_key,
                question_slug=claim.question_slug,
                said_holds=said_holds,
                correct=said_holds == claim.holds,
            )
            review.review_record(
                learner=attempt.learner,
                kind=ReviewItem.Kind.CLAIM,
                key=claim_key,
                question_slug=claim.question_slug,
                quality=review.QUALITY["correct" if answer.correct else "wrong"],
                today=today,
            )
    except IntegrityError:
        # Two submits raced past the check above; the one that got in first counts.
        return attempt.answers.get(claim_key=claim_key), False
    return answer, True

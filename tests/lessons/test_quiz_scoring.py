"""Scoring and ordering, as plain functions over claims."""

from lessons.lesson import Claim
from lessons.models import QuizAnswer
from lessons.quiz import MIXED_COST, MIXED_HOLD, Item, ordered_keys, pick_mixed, score_items


def claim(slug: str, n: int, holds: bool) -> Claim:
    kind = "hold" if holds else "cost"
    return Claim(
        f"{slug}:{kind}-{n}", f"{kind}-{n}", slug, f"text {n}", holds, "why", None, "basics"
    )


CLAIMS = [claim(f"q{q}", n, holds) for q in range(6) for n in range(5) for holds in (False, True)]


def answered(key: str, correct: bool | None) -> Item:
    answer = (
        None if correct is None else QuizAnswer(claim_key=key, said_holds=True, correct=correct)
    )
    return Item(number=0, key=key, claim=None, answer=answer)


def test_same_seed_gives_the_same_order_and_other_seeds_shuffle():
    keys = [c.key for c in CLAIMS]
    assert ordered_keys(claim_keys=keys, seed=7) == ordered_keys(claim_keys=keys, seed=7)
    assert sorted(ordered_keys(claim_keys=keys, seed=7)) == sorted(keys)
    assert len({tuple(ordered_keys(claim_keys=keys, seed=s)) for s in range(5)}) == 5


def test_mixed_pick_spreads_over_questions_and_mixes_in_claims_that_hold():
    for seed in range(50):
        picked = pick_mixed(claims=CLAIMS, seed=seed)
        chosen = [c for c in CLAIMS if c.key in picked]
        assert len(picked) == len(set(picked)) == MIXED_COST + MIXED_HOLD
        assert sum(c.holds for c in chosen) == MIXED_HOLD
        assert {c.question_slug for c in chosen} == {f"q{q}" for q in range(6)}
    assert pick_mixed(claims=CLAIMS, seed=1) == pick_mixed(claims=CLAIMS, seed=1)


def test_mixed_pick_with_few_claims_takes_what_there_is():
    few = CLAIMS[:3]
    assert sorted(pick_mixed(claims=few, seed=3)) == sorted(c.key for c in few)
    assert pick_mixed(claims=[], seed=3) == []


def test_score_counts_right_answers_over_answered_items_and_lists_misses():
    items = [answered("a", True), answered("b", False), answered("c", True), answered("d", None)]
    score = score_items(items)
    assert (score.correct, score.answered, score.total) == (2, 3, 4)
    assert [i.key for i in score.missed] == ["b"]
    assert [i.key for i in score.unanswered] == ["d"]
    assert score.percent == 67 and not score.finished


def test_nothing_answered_scores_zero_without_dividing_by_zero():
    score = score_items([answered("a", None)])
    assert (score.correct, score.percent, score.finished) == (0, 0, False)

"""The quiz on the real lesson files: every claim of every question gets accurate feedback,
and a mixed quiz draws cost and hold claims from across the questions."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.urls import reverse

from lessons.catalog import all_questions, catalog_problems, get_claim
from lessons.models import QuizAnswer
from lessons.quiz import MIXED_COST, MIXED_HOLD
from lessons.rendering import render_markdown
from tests.lessons.quiz_support import answer, right_answer, shown_claims, start_quiz, wrong_answer

pytestmark = pytest.mark.django_db


def test_the_real_lessons_load_with_claims_to_quiz_on():
    assert catalog_problems() == []
    questions = all_questions()
    assert questions, "lessons/content/ has no lesson files"
    for question in questions:
        assert len(question.claims_cost) >= 5 and len(question.claims_hold) >= 3


def test_the_index_links_every_shipped_lesson_file(client):
    files = sorted(Path(settings.LESSONS_DIR).glob("[0-9][0-9]-*.yaml"))
    slugs = [yaml.safe_load(f.read_text(encoding="utf-8"))["slug"] for f in files]
    page = client.get(reverse("lessons:index")).content.decode()
    assert len(slugs) >= 9
    for slug in slugs:
        assert f'href="/q/{slug}/"' in page, slug


@pytest.mark.parametrize("question", all_questions(), ids=lambda q: q.slug)
def test_every_claim_of_a_real_question_gets_accurate_feedback(client, question):
    attempt = start_quiz(client, question.slug)
    shown = shown_claims(client, attempt)
    assert sorted(shown) == sorted(c.key for c in question.claims)
    for number, key in enumerate(shown):
        claim = get_claim(key)
        given = right_answer(claim.holds) if number % 2 else wrong_answer(claim.holds)
        page = answer(client, attempt, key, given).content.decode()
        assert ("Right." if number % 2 else "Not right.") in page, key
        verdict = "it holds up" if claim.holds else "it costs you the question"
        assert verdict in html.unescape(page), key
        assert str(render_markdown(claim.why)) in page, key
        if claim.truth:
            assert str(render_markdown(claim.truth)) in page, key
        assert f'href="/q/{question.slug}/{claim.tier}/"' in page, key
    assert QuizAnswer.objects.filter(attempt_id=attempt).count() == len(question.claims)


def test_a_mixed_quiz_over_the_real_lessons_mixes_questions_and_kinds(client):
    claims = [get_claim(k) for k in shown_claims(client, start_quiz(client))]
    assert len(claims) == 12
    assert sum(c.holds for c in claims) == 4
    # cost claims cover up to MIXED_COST questions; holds start with the questions left over
    questions = len(all_questions())
    assert len({c.question_slug for c in claims}) == min(questions, MIXED_COST + MIXED_HOLD)
    assert len({c.question_slug for c in claims if not c.holds}) == min(questions, MIXED_COST)

"""The quiz over HTTP: feedback, one answer per item, and clear refusals (never a 500)."""

import shutil

import pytest
from django.test import Client

from lessons.catalog import get_claim, get_question
from lessons.models import QuizAnswer, ReviewItem
from tests.lessons.quiz_support import (
    ALPHA,
    BETA,
    QUIZ_FIXTURES,
    answer,
    client_learner,
    right_answer,
    shown_claims,
    start_quiz,
    wrong_answer,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quiz_lessons(settings):
    settings.LESSONS_DIR = QUIZ_FIXTURES


def test_question_quiz_shows_every_claim_of_that_question_cost_and_hold_mixed(client):
    attempt = start_quiz(client, ALPHA)
    shown = shown_claims(client, attempt)
    question = get_question(ALPHA)
    assert sorted(shown) == sorted(c.key for c in question.claims)
    assert any(get_claim(k).holds for k in shown) and not all(get_claim(k).holds for k in shown)


def test_order_is_shuffled_but_the_same_on_every_reload_of_an_attempt(client):
    first = start_quiz(client, ALPHA)
    assert shown_claims(client, first) == shown_claims(client, first)
    orders = {tuple(shown_claims(client, start_quiz(client, ALPHA))) for _ in range(6)}
    assert len(orders) > 1  # six attempts in one order would be 1 chance in (8!)^5


def test_mixed_quiz_draws_from_several_questions_and_includes_claims_that_hold(client):
    shown = shown_claims(client, start_quiz(client))
    claims = [get_claim(k) for k in shown]
    assert {c.question_slug for c in claims} == {ALPHA, BETA}
    assert sum(c.holds for c in claims) >= 3
    assert sum(not c.holds for c in claims) >= 5


def test_wrong_answer_shows_why_what_is_true_and_a_link_to_the_tier(client):
    attempt = start_quiz(client, ALPHA)
    key = f"{ALPHA}:cost-2"
    claim = get_claim(key)
    response = answer(client, attempt, key, "holds")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Not right." in html
    assert claim.why in html and claim.truth in html
    assert f'href="/q/{ALPHA}/{claim.tier}/"' in html
    assert 'id="quiz-tally"' in html and "Answered 1 of 8, 0 right." in html


def test_right_answer_to_a_claim_that_holds_says_so(client):
    attempt = start_quiz(client, ALPHA)
    key = f"{ALPHA}:hold-1"
    html = answer(client, attempt, key, "holds").content.decode()
    assert "Right." in html and get_claim(key).why in html
    assert "What is true" not in html


def test_double_submit_returns_the_first_answer_and_counts_once(client):
    attempt = start_quiz(client, ALPHA)
    key = f"{ALPHA}:cost-1"
    first = answer(client, attempt, key, "costs")
    again = answer(client, attempt, key, "costs")
    changed_mind = answer(client, attempt, key, "holds")
    assert first.status_code == again.status_code == changed_mind.status_code == 200
    assert "Right." in changed_mind.content.decode()
    assert "your first answer is the one that counts" in changed_mind.content.decode()
    assert QuizAnswer.objects.filter(attempt_id=attempt).count() == 1
    item = ReviewItem.objects.get(key=key)
    assert item.reviews == 1 and item.lapses == 0


def test_replayed_plain_form_post_redirects_to_the_item_without_counting_again(client):
    attempt = start_quiz(client, ALPHA)
    key = f"{ALPHA}:cost-3"
    for _ in range(3):
        response = answer(client, attempt, key, "holds", htmx=False)
        assert response.status_code == 302
        assert response["Location"].startswith(f"/quiz/a/{attempt}/#item-")
    assert QuizAnswer.objects.get(attempt_id=attempt, claim_key=key).correct is False
    assert ReviewItem.objects.get(key=key).reviews == 1


def test_someone_elses_attempt_is_a_clear_404_for_every_action(client):
    attempt = start_quiz(client, ALPHA)
    stranger = Client()
    key = f"{ALPHA}:cost-1"
    for response in (
        stranger.get(f"/quiz/a/{attempt}/"),
        stranger.get(f"/quiz/a/{attempt}/result/"),
        answer(stranger, attempt, key, "costs", htmx=False),
        answer(stranger, attempt, key, "costs"),
        stranger.post(f"/quiz/a/{attempt}/retry/"),
    ):
        assert response.status_code == 404
        assert "no quiz attempt of yours" in response.content.decode()
    assert not QuizAnswer.objects.exists()


def test_unknown_claim_is_a_clear_404_fragment_for_htmx(client):
    attempt = start_quiz(client, ALPHA)
    response = answer(client, attempt, f"{ALPHA}:no-such-claim", "costs")
    assert response.status_code == 404
    assert "There is no such claim" in response.content.decode()
    assert response["HX-Retarget"] == "#quiz-problem"
    assert response["X-Quiz-Problem"] == "1"


def test_claim_of_another_question_is_refused_as_not_in_the_attempt(client):
    attempt = start_quiz(client, ALPHA)
    response = answer(client, attempt, f"{BETA}:cost-1", "costs", htmx=False)
    assert response.status_code == 400
    assert "not part of this quiz attempt" in response.content.decode()
    assert not QuizAnswer.objects.exists()


def test_answer_other_than_the_two_choices_is_refused(client):
    attempt = start_quiz(client, ALPHA)
    response = answer(client, attempt, f"{ALPHA}:cost-1", "maybe", htmx=False)
    assert response.status_code == 400
    assert "Choose" in response.content.decode()


def test_unknown_question_and_missing_attempt_are_404_pages(client):
    assert client.post("/quiz/start/", {"question": "nope"}).status_code == 404
    assert client.get("/quiz/a/999999/").status_code == 404


def test_result_lists_missed_claims_with_explanations_and_retry_has_only_those(client):
    attempt = start_quiz(client, ALPHA)
    keys = shown_claims(client, attempt)
    missed = keys[:2]
    for key in keys:
        holds = get_claim(key).holds
        answer(client, attempt, key, wrong_answer(holds) if key in missed else right_answer(holds))
    html = client.get(f"/quiz/a/{attempt}/result/").content.decode()
    assert "6 right out of 8 answered" in html
    for key in missed:
        assert get_claim(key).text in html and get_claim(key).why in html
    response = client.post(f"/quiz/a/{attempt}/retry/")
    retry = int(response["Location"].rstrip("/").split("/")[-1])
    assert sorted(shown_claims(client, retry)) == sorted(missed)


def test_retry_with_nothing_missed_says_so(client):
    attempt = start_quiz(client, ALPHA)
    key = f"{ALPHA}:cost-1"
    answer(client, attempt, key, "costs")
    response = client.post(f"/quiz/a/{attempt}/retry/")
    assert response.status_code == 400
    assert "nothing to retry" in response.content.decode()


def test_answering_costs_every_time_does_not_score_full_marks(client):
    attempt = start_quiz(client, ALPHA)
    for key in shown_claims(client, attempt):
        answer(client, attempt, key, "costs")
    html = client.get(f"/quiz/a/{attempt}/result/").content.decode()
    assert "5 right out of 8 answered" in html


def test_posts_without_a_csrf_token_are_refused():
    client = Client(enforce_csrf_checks=True)
    client.get("/quiz/")
    assert client.post("/quiz/start/", {"question": ALPHA}).status_code == 403
    assert client.post(f"/q/{ALPHA}/basics/rate/", {"rating": "nailed"}).status_code == 403
    assert client.post("/progress/reset/", {"confirm": "yes"}).status_code == 403


def test_review_quiz_holds_the_claims_due_today(client):
    attempt = start_quiz(client, ALPHA)
    answer(client, attempt, f"{ALPHA}:cost-1", "holds")
    answer(client, attempt, f"{ALPHA}:cost-2", "costs")
    response = client.post("/review/quiz/")
    review_attempt = int(response["Location"].rstrip("/").split("/")[-1])
    assert shown_claims(client, review_attempt) == [f"{ALPHA}:cost-1"]
    assert client_learner(client).quiz_attempts.count() == 2


def test_an_attempt_number_too_big_for_the_database_is_a_404_not_a_500(client):
    assert client.get(f"/quiz/a/{2**70}/").status_code == 404
    assert answer(client, 2**64, f"{ALPHA}:cost-1", "costs").status_code == 404


def test_question_page_offers_its_quiz(client):
    html = client.get(f"/q/{ALPHA}/").content.decode()
    assert 'action="/quiz/start/"' in html and f'name="question" value="{ALPHA}"' in html


@pytest.mark.parametrize("htmx", [False, True])
def test_malformed_form_posts_get_a_clear_4xx_never_a_500(client, htmx):
    attempt_id = start_quiz(client, ALPHA)
    headers = {"HX-Request": "true"} if htmx else {}
    posts = [
        (f"/quiz/a/{attempt_id}/answer/", {}),
        (f"/quiz/a/{attempt_id}/answer/", {"claim": "\x00", "answer": "holds"}),
        (f"/quiz/a/{attempt_id}/answer/", {"claim": f"{ALPHA}:", "answer": "costs"}),
        (f"/quiz/a/{attempt_id}/answer/", {"claim": "x" * 5000, "answer": "holds"}),
        (f"/quiz/a/{attempt_id}/answer/", {"claim": ["a", "b"], "answer": ["holds", "costs"]}),
        ("/quiz/start/", {"question": "\x00" * 3}),
        (f"/q/{ALPHA}/basics/rate/", {"rating": "\x00"}),
        ("/progress/reset/", {"confirm": "maybe"}),
        ("/accounts/signup/", {"username": "\x00", "password1": "a", "password2": "b"}),
    ]
    codes = [client.post(url, data, headers=headers).status_code for url, data in posts]
    bodies = [
        (b"\xff\xfe\x00garbage", "application/x-www-form-urlencoded"),
        (b"claim=%ZZ&&&==", "application/x-www-form-urlencoded"),
        (b"--x\r\nbroken", "multipart/form-data; boundary=x"),
    ]
    codes += [
        client.generic(
            "POST",
            f"/quiz/a/{attempt_id}/answer/",
            body,
            content_type=kind,
            **{f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()},
        ).status_code
        for body, kind in bodies
    ]
    assert all(400 <= code < 500 for code in codes), codes
    assert not QuizAnswer.objects.exists()


def test_a_quiz_whose_lesson_was_taken_out_still_shows_its_result(client, settings, tmp_path):
    lessons = tmp_path / "content"
    shutil.copytree(QUIZ_FIXTURES, lessons)
    settings.LESSONS_DIR = lessons
    attempt_id = start_quiz(client, ALPHA)
    for key in shown_claims(client, attempt_id):
        answer(client, attempt_id, key, wrong_answer(get_claim(key).holds), htmx=False)
    for path in lessons.glob("*.yaml"):
        if f"slug: {ALPHA}\n" in path.read_text():
            path.unlink()

    result = client.get(f"/quiz/a/{attempt_id}/result/")
    retry = client.post(f"/quiz/a/{attempt_id}/retry/")

    assert result.status_code == 200
    assert "taken out of the lessons since you answered it" in result.content.decode()
    assert retry.status_code == 400
    assert "nothing to retry" in retry.content.decode()

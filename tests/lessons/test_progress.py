"""Progress without an account: self-ratings, the progress page, reset, download, and the
merge into an account on sign-in."""

import datetime as dt
import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from lessons.catalog import get_claim
from lessons.models import Learner, QuizAnswer, ReviewItem, SelfRating, TierReveal
from tests.lessons.quiz_support import (
    ALPHA,
    BETA,
    QUIZ_FIXTURES,
    answer,
    client_learner,
    shown_claims,
    start_quiz,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quiz_lessons(settings):
    settings.LESSONS_DIR = QUIZ_FIXTURES


def rate(client, slug, tier, rating, htmx=True):
    headers = {"HX-Request": "true"} if htmx else {}
    return client.post(f"/q/{slug}/{tier}/rate/", {"rating": rating}, headers=headers)


def test_self_rating_is_saved_and_schedules_the_question(client):
    response = rate(client, ALPHA, "solid", "missed")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'value="missed" aria-pressed="true"' in html
    assert "Saved: missed it. This question comes back for review today" in html
    item = ReviewItem.objects.get(kind="question", key=ALPHA)
    assert item.due_on == timezone.localdate()


def test_same_rating_twice_is_stored_and_graded_once(client):
    rate(client, ALPHA, "basics", "nailed")
    rate(client, ALPHA, "basics", "nailed")
    assert SelfRating.objects.count() == 1
    assert ReviewItem.objects.get(kind="question", key=ALPHA).reviews == 1
    rate(client, ALPHA, "basics", "partly")
    assert SelfRating.objects.count() == 2


def test_rating_without_htmx_goes_back_to_the_tier(client):
    response = rate(client, ALPHA, "senior", "partly", htmx=False)
    assert response.status_code == 302
    assert response["Location"] == f"/q/{ALPHA}/senior/#self-rating-senior"


def test_rating_an_unknown_tier_or_question_or_value_is_refused(client):
    assert rate(client, ALPHA, "expert", "nailed", htmx=False).status_code == 404
    assert rate(client, "nope", "basics", "nailed", htmx=False).status_code == 404
    assert rate(client, ALPHA, "basics", "brilliant", htmx=False).status_code == 400
    assert not SelfRating.objects.exists()


def test_rating_form_renders_through_the_template_tag_with_the_current_rating(client):
    from django.template import Context, Template
    from django.test import RequestFactory

    rate(client, BETA, "solid", "partly")
    request = RequestFactory().get("/")
    request.session = client.session
    request.user = type("Anon", (), {"is_authenticated": False})()
    html = Template("{% load quiz_tags %}{% self_rating slug 'solid' %}").render(
        Context({"request": request, "slug": BETA, "csrf_token": "tok"})
    )
    assert f'action="/q/{BETA}/solid/rate/"' in html
    assert 'value="partly" aria-pressed="true"' in html


def test_progress_page_shows_tiers_seen_last_rating_accuracy_and_next_review(client):
    client.get(f"/q/{ALPHA}/solid/")  # the lessons app records basics and solid as seen
    rate(client, ALPHA, "solid", "partly")
    attempt = start_quiz(client, ALPHA)
    answer(client, attempt, f"{ALPHA}:cost-1", "costs")
    answer(client, attempt, f"{ALPHA}:cost-2", "holds")
    answer(client, attempt, f"{ALPHA}:hold-1", "holds")
    html = client.get("/progress/").content.decode()
    section = html[html.index(f'id="progress-{ALPHA}"') : html.index(f'id="progress-{BETA}"')]
    assert "basics, solid" in section
    assert "Partly (solid)" in section
    assert "67% (2 of 3)" in section
    today = timezone.localdate()
    assert today.strftime("%a %-d %b %Y") in section and "1 claim due" in section
    beta = html[html.index(f'id="progress-{BETA}"') :]
    assert "not quizzed yet" in beta and "not scheduled" in beta


def test_progress_of_one_learner_is_invisible_to_another(client):
    attempt = start_quiz(client, ALPHA)
    answer(client, attempt, f"{ALPHA}:cost-1", "holds")
    other = Client()
    html = other.get("/progress/").content.decode()
    assert "not quizzed yet" in html and "%" not in html.split("Quiz accuracy")[1][:60]
    assert "Nothing is due today" in other.get("/review/").content.decode()
    export = json.loads(other.get("/progress/download/").content)
    assert export["quiz_attempts"] == [] and export["review"] == []


def test_review_page_lists_missed_claims_due_today_and_known_ones_coming_up(client):
    attempt = start_quiz(client, ALPHA)
    answer(client, attempt, f"{ALPHA}:cost-1", "holds")
    answer(client, attempt, f"{ALPHA}:cost-2", "costs")
    html = client.get("/review/").content.decode()
    due = html[html.index('id="due-claims"') : html.index('id="upcoming"')]
    upcoming = html[html.index('id="upcoming"') :]
    assert get_claim(f"{ALPHA}:cost-1").text in due
    assert get_claim(f"{ALPHA}:cost-2").text not in due
    in_four_days = timezone.localdate() + dt.timedelta(days=4)
    assert f'data-key="{ALPHA}:cost-2" data-due="{in_four_days:%Y-%m-%d}"' in upcoming
    assert f"In 4 days ({in_four_days:%a %-d %b})" in upcoming


def test_download_holds_every_kind_of_progress_as_json(client):
    client.get(f"/q/{ALPHA}/basics/")
    rate(client, ALPHA, "basics", "nailed")
    attempt = start_quiz(client, ALPHA)
    answer(client, attempt, f"{ALPHA}:cost-1", "holds")
    response = client.get("/progress/download/")
    assert response["Content-Type"] == "application/json"
    assert "attachment" in response["Content-Disposition"]
    data = json.loads(response.content)
    assert data["account"] is None
    assert data["tiers_revealed"][0]["question"] == ALPHA
    assert data["self_ratings"][0]["rating"] == "nailed"
    [exported] = data["quiz_attempts"]
    assert exported["answers"] == [
        {
            "claim": f"{ALPHA}:cost-1",
            "said": "holds up",
            "correct": False,
            "answered_at": exported["answers"][0]["answered_at"],
        }
    ]
    unanswered = [k for k in exported["claims_in_order"] if k != f"{ALPHA}:cost-1"]
    assert unanswered == shown_claims(client, attempt)  # the order the page shows
    assert {r["key"] for r in data["review"]} == {ALPHA, f"{ALPHA}:cost-1"}


def test_reset_asks_first_and_deletes_only_after_confirmation(client):
    client.get(f"/q/{ALPHA}/basics/")
    rate(client, ALPHA, "basics", "missed")
    attempt = start_quiz(client, ALPHA)
    answer(client, attempt, f"{ALPHA}:cost-1", "holds")
    learner = client_learner(client)
    page = client.get("/progress/reset/").content.decode()
    assert "1 quiz attempt<" in page and "1 self-rating<" in page  # singular for one
    refused = client.post("/progress/reset/", {})
    assert refused.status_code == 400 and "Nothing was deleted" in refused.content.decode()
    assert learner.quiz_attempts.count() == 1
    done = client.post("/progress/reset/", {"confirm": "yes"})
    assert done["Location"] == "/progress/?reset=1"
    for model in (TierReveal, SelfRating, ReviewItem):
        assert not model.objects.filter(learner=learner).exists()
    assert not learner.quiz_attempts.exists() and not QuizAnswer.objects.exists()
    assert "Your progress was reset" in client.get(done["Location"]).content.decode()


def test_reset_of_one_learner_leaves_another_alone(client):
    other = Client()
    attempt = start_quiz(other, ALPHA)
    answer(other, attempt, f"{ALPHA}:cost-1", "holds")
    client.get("/progress/")
    client.post("/progress/reset/", {"confirm": "yes"})
    assert client_learner(other).quiz_attempts.count() == 1


def test_first_sign_in_turns_the_anonymous_learner_into_the_account(client):
    User.objects.create_user("ada", password="correct horse 42")
    attempt = start_quiz(client, ALPHA)
    answer(client, attempt, f"{ALPHA}:cost-1", "holds")
    anonymous = client_learner(client)
    response = client.post("/accounts/login/", {"username": "ada", "password": "correct horse 42"})
    assert response.status_code == 302
    anonymous.refresh_from_db()
    assert anonymous.user.username == "ada"
    other_device = Client()
    other_device.post("/accounts/login/", {"username": "ada", "password": "correct horse 42"})
    assert "0% (0 of 1)" in other_device.get("/progress/").content.decode()


def test_sign_in_merges_anonymous_progress_into_an_existing_account(client):
    User.objects.create_user("bo", password="correct horse 42")
    laptop = Client()
    laptop.post("/accounts/login/", {"username": "bo", "password": "correct horse 42"})
    laptop.get(f"/q/{ALPHA}/basics/")
    done = start_quiz(laptop, ALPHA)
    answer(laptop, done, f"{ALPHA}:cost-1", "costs")
    account = client_learner(laptop)

    client.get(f"/q/{ALPHA}/solid/")  # the phone, not signed in yet
    phone = start_quiz(client, BETA)
    answer(client, phone, f"{BETA}:cost-1", "holds")
    rate(client, BETA, "basics", "missed")
    answer(client, phone, f"{BETA}:hold-1", "holds")
    client.post("/accounts/login/", {"username": "bo", "password": "correct horse 42"})

    assert account.quiz_attempts.count() == 2
    assert account.self_ratings.count() == 1
    assert sorted(account.tier_reveals.values_list("tier", flat=True)) == ["basics", "solid"]
    assert set(account.review_items.values_list("key", flat=True)) == {
        f"{ALPHA}:cost-1",
        f"{BETA}:cost-1",
        f"{BETA}:hold-1",
        BETA,
    }
    html = laptop.get("/review/").content.decode()
    assert get_claim(f"{BETA}:cost-1").text in html  # missed on the phone, due on the laptop
    assert client_learner(client) == account


def test_merge_keeps_the_more_recently_reviewed_schedule_of_a_claim_in_both(client):
    from lessons.progress import progress_merge
    from lessons.review import review_record

    anonymous, account = Learner.objects.create(), Learner.objects.create()
    today = timezone.localdate()
    common = {"kind": "claim", "key": f"{ALPHA}:cost-1", "question_slug": ALPHA, "quality": 5}
    review_record(learner=account, today=today - dt.timedelta(days=10), **common)
    review_record(learner=anonymous, today=today, **{**common, "quality": 1})
    progress_merge(source=anonymous, target=account)
    [item] = account.review_items.all()
    assert item.due_on == today and item.lapses == 1


def test_signing_up_keeps_the_progress_made_before(client):
    attempt = start_quiz(client, ALPHA)
    answer(client, attempt, f"{ALPHA}:cost-1", "holds")
    form = client.get("/accounts/signup/")
    assert form.status_code == 200
    response = client.post(
        "/accounts/signup/",
        {
            "username": "cy",
            "password1": "a long pass phrase 9",
            "password2": "a long pass phrase 9",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/progress/"
    assert Learner.objects.get(user__username="cy").quiz_attempts.count() == 1
    bad = client.post("/accounts/signup/", {"username": "", "password1": "x", "password2": "y"})
    assert bad.status_code == 400 and "errorlist" in bad.content.decode()


def test_sign_in_brings_the_anonymous_lab_runs_into_an_existing_account(client):
    from teachlab.lab.models import Run

    account_user = User.objects.create_user("cy", password="correct horse 42")
    account = Learner.objects.create(user=account_user)
    client.get("/progress/")
    anonymous = client_learner(client)
    run = Run.objects.create(learner=anonymous, lane="redis-short", params={"count": 1})
    client.post("/accounts/login/", {"username": "cy", "password": "correct horse 42"})
    run.refresh_from_db()
    assert run.learner == account
    assert run.id in client.get("/lab/runs/").content.decode()

"""Generated bad input for the forms (issue 14, item 2): never a 500, and an input the app
refused leaves the database as it was.

Django's in-process test client keeps thousands of inputs cheap. The example count is
TEACHLAB_FUZZ_EXAMPLES (2,000 under CI=true, 100 otherwise)."""

from __future__ import annotations

import os

import pytest
from django.apps import apps
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.lessons.quiz_support import ALPHA, QUIZ_FIXTURES, start_quiz
from tests.stack import IN_CI

EXAMPLES = int(os.environ.get("TEACHLAB_FUZZ_EXAMPLES") or (2000 if IN_CI else 100))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

# Text that forms meet in the wild: empty, huge, control characters, lookalike numbers.
junk = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "0", "-1", "1e309", "nan", "inf", "NaN", "9" * 40, "\x00", "🙂"]),
    st.integers(min_value=-(10**12), max_value=10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
)


def _fields(names: list[str]):
    return st.dictionaries(st.sampled_from(names), junk, max_size=len(names))


# The tables each form could write to: the state a refused input must not change.
WRITTEN = ["lessons.QuizAttempt", "lessons.QuizAnswer", "lessons.ReviewItem", "lessons.SelfRating"]
WRITTEN += ["lab.Run", "workshop.Seat"]


def _rows() -> dict[str, int]:
    found = {}
    for label in WRITTEN:
        try:
            model = apps.get_model(label)
        except LookupError:
            continue
        found[label] = model.objects.count()
    return found


def _post(client: Client, url: str, data: dict, htmx: bool):
    headers = {"HX-Request": "true"} if htmx else {}
    return client.post(url, data, headers=headers)


@pytest.fixture(autouse=True)
def quiz_lessons(settings):
    settings.LESSONS_DIR = QUIZ_FIXTURES


@FUZZ
@given(data=_fields(["claim", "answer"]), htmx=st.booleans())
def test_quiz_answer_form_never_500s_and_refusals_store_nothing(client, data, htmx):
    attempt = getattr(client, "_fuzz_attempt", None) or start_quiz(client, ALPHA)
    client._fuzz_attempt = attempt
    before = _rows()
    response = _post(client, f"/quiz/a/{attempt}/answer/", data, htmx)
    assert response.status_code < 500
    valid = data.get("answer") in {"holds", "costs"} and str(data.get("claim", "")).startswith(
        f"{ALPHA}:"
    )
    if not valid:
        assert _rows() == before


@FUZZ
@given(data=_fields(["question"]), htmx=st.booleans())
def test_quiz_start_form_never_500s(client, data, htmx):
    before = _rows()
    response = _post(client, "/quiz/start/", data, htmx)
    assert response.status_code < 500
    if response.status_code >= 400:
        assert _rows() == before


@FUZZ
@given(slug=st.sampled_from([ALPHA, "nope"]), tier=junk, data=_fields(["rating"]))
def test_self_rating_form_never_500s_and_refusals_store_nothing(client, slug, tier, data):
    tier = "".join(ch for ch in tier if ch.isalnum() or ch in "-_") or "basics"
    before = _rows()
    response = client.post(f"/q/{slug}/{tier}/rate/", data)
    assert response.status_code < 500
    if response.status_code >= 400:
        assert _rows() == before


LAB_FIELDS = ["lane", "countdown", "eta", "expires", "duration", "count", "spacing"]
LAB_FIELDS += ["acks_late", "guard", "prediction", "fail", "retry", "retry_delay"]


@FUZZ
@given(data=_fields(LAB_FIELDS), htmx=st.booleans())
def test_lab_run_form_never_500s_and_a_refused_run_is_never_stored(client, data, htmx):
    # No valid lane ever: a run that passed would publish tasks, this test is about refusals.
    data["lane"] = "x" + str(data.get("lane", ""))
    before = _rows()
    response = _post(client, "/lab/", data, htmx)
    assert response.status_code < 500
    after = _rows()
    assert after["lab.Run"] == before["lab.Run"]


@FUZZ
@given(data=_fields(["code", "nickname", "name"]), htmx=st.booleans())
def test_workshop_join_form_never_500s_and_a_refused_join_takes_no_seat(client, data, htmx):
    before = _rows()
    response = _post(client, "/workshop/join/", data, htmx)
    assert response.status_code < 500
    assert _rows() == before  # no room exists, so every join is refused

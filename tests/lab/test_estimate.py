"""The run form's cost estimate: /lab/estimate/ (htmx partial and JSON), the estimate on the
lab page before firing, on the run page after, and the form's refusal of a run over budget."""

from __future__ import annotations

import html

import pytest
from django.test import Client

from lessons.learners import SESSION_KEY
from lessons.models import Learner
from teachlab.lab.models import Run
from teachlab.lab.runs.costs import BYTES_PER_HELD_DELIVERY

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}
TEXT = "about 2,700 deliveries, 31 MB of worker memory, 90 s"


@pytest.fixture
def client() -> Client:
    client = Client()
    session = client.session
    session[SESSION_KEY] = Learner.objects.create().key
    session.save()
    return client


def page_text(response) -> str:
    return html.unescape(response.content.decode())


def test_the_estimate_partial_gives_deliveries_memory_and_seconds(client):
    response = client.get(
        "/lab/estimate/", {"lane": "redis-short", "count": "300", "countdown": "90"}, **HX
    )
    assert response.status_code == 200
    text = page_text(response)
    assert TEXT in text
    assert text.lstrip().startswith('<div id="estimate"')  # the partial alone, for the swap


def test_the_estimate_as_json_has_the_interface_keys(client):
    response = client.get(
        "/lab/estimate/",
        {"lane": "redis-short", "count": "300", "countdown": "90"},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 200
    data = response.json()
    assert data["deliveries"] == 2700
    assert data["memory_bytes"] == 2700 * BYTES_PER_HELD_DELIVERY
    assert data["seconds"] == 90
    assert "refused" not in data


def test_the_estimate_says_when_the_run_would_be_refused(client):
    response = client.get(
        "/lab/estimate/", {"lane": "redis-short", "count": "2000", "countdown": "10800"}, **HX
    )
    text = page_text(response)
    assert "about 2,058,000 deliveries" in text
    assert "one run may make at most 10,000 deliveries" in text


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ({"lane": "redis-short", "count": "abc"}, "count must be a number"),
        ({"lane": "nope", "count": "1"}, "Select a valid choice"),
        ({"lane": "redis-short", "countdown": "1e400"}, "finite number"),
        ({"lane": "redis-short", "countdown": "-5"}, "cannot be less than 0"),
        ({"lane": "redis-short", "eta": "yesterday"}, "must be a date and time"),
        ({"lane": "redis-short", "count": "999999999999"}, "far beyond anything"),
        ({"lane": "redis-short", "count": "5000"}, "at most 2000 tasks"),
        ({}, "Lane: This field is required"),
        ({"lane": ["redis-short", "x"], "count": "\x00"}, "Null characters are not allowed"),
    ],
)
def test_garbage_input_gets_a_message_never_a_500(client, query, says):
    swapped = client.get("/lab/estimate/", query, **HX)
    assert swapped.status_code == 200  # htmx swaps only 2xx answers
    assert says in page_text(swapped)
    plain = client.get("/lab/estimate/", query)
    assert plain.status_code == 400
    assert says in page_text(plain)
    as_json = client.get("/lab/estimate/", query, HTTP_ACCEPT="application/json")
    assert as_json.status_code == 400
    assert says in as_json.json()["error"]


def test_the_estimate_is_read_only(client):
    assert client.post("/lab/estimate/", {"lane": "redis-short"}).status_code == 405
    assert not Run.objects.exists()


def test_the_lab_page_shows_the_estimate_and_asks_again_as_the_form_changes(client):
    text = page_text(client.get("/lab/"))
    assert 'id="estimate"' in text
    assert 'hx-get="/lab/estimate/"' in text
    assert 'hx-params="not csrfmiddlewaretoken"' in text  # the token stays out of URLs
    # the form's initial run: one task, countdown 25, on redis-short
    assert "This run: about 3 deliveries, 35 KB of worker memory, 25 s." in text


def test_a_run_over_budget_posted_from_the_form_is_refused_with_the_message(client):
    response = client.post("/lab/", {"lane": "redis-short", "count": "2000", "countdown": "10800"})
    assert response.status_code == 400
    text = page_text(response)
    assert "one run may make at most 10,000 deliveries" in text
    assert not Run.objects.exists()


def test_the_accepted_run_page_shows_the_estimate_it_was_fired_with(client):
    response = client.post("/lab/", {"lane": "redis-short", "count": "300", "countdown": "90"})
    assert response.status_code == 302
    text = page_text(client.get(response["Location"]))
    assert f"Estimated when fired: {TEXT}." in text

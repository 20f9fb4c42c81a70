"""The index and the question walk through Django's test client: answers stay hidden until
asked for, htmx gets just the new tier, every reveal is recorded for this learner only."""

from __future__ import annotations

import shutil
from html.parser import HTMLParser

import pytest
import yaml
from django.test import Client
from django.urls import reverse

from lessons import pages
from lessons.models import TierReveal
from tests.lessons.lessonfiles import FIXTURES, replace_once

pytestmark = pytest.mark.django_db

BASICS_TEXT = "A worker pulls the message almost at"
SOLID_TEXT = "The worker reserves the message immediately"
SENIOR_TEXT = "The options side by side"


@pytest.fixture(autouse=True)
def lesson_dir(settings, tmp_path):
    directory = tmp_path / "content"
    shutil.copytree(FIXTURES, directory)
    settings.LESSONS_DIR = directory
    return directory


def _html(response) -> str:
    return response.content.decode()


def test_index_lists_questions_with_level_importance_and_frequency(client):
    response = client.get(reverse("lessons:index"))

    assert response.status_code == 200
    html = _html(response)
    assert "Where does a countdown task wait?" in html
    assert html.index("Where does a countdown task wait?") < html.index("When does acks_late help?")
    assert "<dd>middle</dd>" in html and "<dd>often</dd>" in html
    assert 'href="/q/fixture-countdown/"' in html
    assert html.count("not yet revealed") == 6


def test_index_shows_the_tiers_this_learner_revealed(client):
    client.get(reverse("lessons:tier", args=["fixture-countdown", "solid"]))

    html = _html(client.get(reverse("lessons:index")))

    assert html.count('class="tier-chip is-revealed"') == 2
    assert html.count("not yet revealed") == 4


def test_question_page_shows_the_prompt_and_hides_every_answer(client):
    response = client.get(reverse("lessons:question", args=["fixture-countdown"]))

    html = _html(response)
    assert response.status_code == 200
    assert "Where is that message during the hour before it runs?" in html
    for hidden in (BASICS_TEXT, SOLID_TEXT, SENIOR_TEXT):
        assert hidden not in html
    assert "Answer out loud (20 s)" in html
    assert 'hx-get="/q/fixture-countdown/basics/"' in html
    assert not TierReveal.objects.exists()


def test_question_page_lists_shortcuts_followups_go_deeper_and_experiments(client):
    html = _html(client.get(reverse("lessons:question", args=["fixture-countdown"])))

    for key in ("<kbd>t</kbd>", "<kbd>r</kbd>", "<kbd>n</kbd>", "<kbd>p</kbd>"):
        assert key in html
    assert "<summary>What happens to held messages on a warm shutdown?</summary>" in html
    assert "When is a due-time table in your database better than broker delays?" in html
    assert 'class="question-actions"' in html
    assert 'data-next-url="/q/fixture-acks-late/"' in html


def test_experiments_link_to_the_lab_with_the_labs_titles(client, monkeypatch):
    monkeypatch.setattr(
        pages, "lab_experiment_titles", lambda: {"countdown-beyond-timeout": "Past the timeout"}
    )
    html = _html(client.get(reverse("lessons:question", args=["fixture-countdown"])))
    assert '<a href="/lab/experiments/countdown-beyond-timeout/">Past the timeout</a>' in html


def test_an_experiment_the_lab_does_not_know_is_listed_without_a_link(client, monkeypatch):
    monkeypatch.setattr(pages, "lab_experiment_titles", lambda: {})
    html = _html(client.get(reverse("lessons:question", args=["fixture-countdown"])))
    assert "Countdown beyond timeout <span" in html
    assert "/lab/experiments/countdown-beyond-timeout/" not in html


def test_htmx_reveal_returns_only_that_tier_and_the_next_step(client):
    response = client.get(
        reverse("lessons:tier", args=["fixture-countdown", "basics"]), HTTP_HX_REQUEST="true"
    )

    html = _html(response)
    assert response.status_code == 200
    assert "<html" not in html and "<header" not in html
    assert BASICS_TEXT in html
    assert SOLID_TEXT not in html
    assert '<div class="highlight">' in html  # the basics code sample, highlighted
    assert "Answer out loud (40 s)" in html
    assert 'hx-get="/q/fixture-countdown/solid/"' in html
    assert 'href="/q/fixture-countdown/basics/"' in html  # its permalink


def test_htmx_reveal_of_the_last_tier_says_all_are_open(client):
    html = _html(
        client.get(
            reverse("lessons:tier", args=["fixture-countdown", "senior"]), HTTP_HX_REQUEST="true"
        )
    )
    assert SENIOR_TEXT in html and "<table" in html
    assert "All three tiers are open" in html
    assert "Answer out loud" not in html


def test_tier_permalink_opens_the_page_with_that_tier_and_the_ones_before(client):
    response = client.get(reverse("lessons:tier", args=["fixture-countdown", "solid"]))

    html = _html(response)
    assert "<html" in html
    assert BASICS_TEXT in html and SOLID_TEXT in html
    assert SENIOR_TEXT not in html
    assert 'hx-get="/q/fixture-countdown/senior/"' in html


def test_each_reveal_is_recorded_once_for_this_learner(client):
    url = reverse("lessons:tier", args=["fixture-countdown", "solid"])
    client.get(url, HTTP_HX_REQUEST="true")
    client.get(url)

    assert sorted(TierReveal.objects.values_list("question_slug", "tier")) == [
        ("fixture-countdown", "basics"),
        ("fixture-countdown", "solid"),
    ]


def test_one_learners_progress_is_not_anothers(client):
    client.get(reverse("lessons:tier", args=["fixture-countdown", "senior"]))
    other = Client()

    html = _html(other.get(reverse("lessons:index")))

    assert 'class="tier-chip is-revealed"' not in html
    assert TierReveal.objects.values("learner").distinct().count() == 1


@pytest.mark.parametrize(
    "url", ["/q/no-such-question/", "/q/no-such-question/basics/", "/q/fixture-countdown/expert/"]
)
def test_unknown_question_or_tier_is_404(client, url):
    assert client.get(url).status_code == 404
    assert not TierReveal.objects.exists()


def test_reveal_does_not_accept_post(client):
    assert client.post("/q/fixture-countdown/basics/").status_code == 405


def test_a_broken_lesson_file_is_named_on_the_index_and_the_rest_still_work(client, lesson_dir):
    path = lesson_dir / "02-fixture-acks-late.yaml"
    path.write_text(replace_once(path.read_text(), "frequency: sometimes", "frequency: hourly"))

    response = client.get(reverse("lessons:index"))

    html = _html(response)
    assert response.status_code == 200
    assert "Some lesson files were left out" in html
    assert "02-fixture-acks-late.yaml:9: frequency: unknown frequency &#x27;hourly&#x27;" in html
    assert "Where does a countdown task wait?" in html
    assert client.get("/q/fixture-countdown/").status_code == 200
    assert client.get("/q/fixture-acks-late/").status_code == 404


def test_a_question_in_a_broken_file_is_404_with_the_reason(client, lesson_dir):
    path = lesson_dir / "02-fixture-acks-late.yaml"
    path.write_text(replace_once(path.read_text(), "frequency: sometimes", "frequency: hourly"))

    response = client.get("/q/fixture-acks-late/")

    assert response.status_code == 404
    html = _html(response)
    assert "There is no question “fixture-acks-late”." in html
    assert "02-fixture-acks-late.yaml:9: frequency: unknown frequency" in html


def test_htmx_history_restore_gets_the_whole_page(client):
    response = client.get(
        reverse("lessons:tier", args=["fixture-countdown", "basics"]),
        HTTP_HX_REQUEST="true",
        HTTP_HX_HISTORY_RESTORE_REQUEST="true",
    )
    assert "<html" in _html(response)


def test_tier_responses_vary_on_htmx_so_caches_keep_page_and_partial_apart(client):
    response = client.get(reverse("lessons:tier", args=["fixture-countdown", "basics"]))
    assert "HX-Request" in response["Vary"]


HOSTILE = (
    '<script>alert(1)</script> <img src=x onerror="alert(2)"> [link](javascript:alert(3)) '
    '<a href="javascript:alert(4)" onclick="alert(5)">y</a> <iframe src="https://e"></iframe>'
)


class _ActiveMarkup(HTMLParser):
    """Collects what a browser would run: script text, event handlers, javascript: URLs."""

    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        if tag in {"img", "iframe"}:
            self.found.append(tag)
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript"):
                self.found.append(f"{tag} {name}={value}")

    def handle_data(self, data):
        if self.lasttag == "script" and "alert" in data:
            self.found.append(data)


def _active_markup(html: str) -> list[str]:
    parser = _ActiveMarkup()
    parser.feed(html)
    return parser.found


def test_script_handlers_and_javascript_links_in_a_lesson_file_never_reach_a_page(
    client, lesson_dir
):
    path = lesson_dir / "01-fixture-countdown.yaml"
    lesson = yaml.safe_load(path.read_text())
    lesson["title"] += HOSTILE
    lesson["prompt"] = lesson["key_points"][0]["point"] = HOSTILE
    hostile_docs = {
        "title": HOSTILE,
        "version": HOSTILE,
        "url": "https://example.org/?<script>",
        "quote": HOSTILE,
        "read": "2026-12-05",
    }
    lesson["key_points"][1]["evidence"] = [{"docs": hostile_docs}]
    lesson["claims_cost"][0]["evidence"] = [{"docs": hostile_docs}]
    lesson["tiers"] = {name: text + "\n\n" + HOSTILE for name, text in lesson["tiers"].items()}
    lesson["go_deeper"] = dict.fromkeys(lesson["go_deeper"], HOSTILE)
    lesson["followups"][0] = {"question": HOSTILE, "answer": HOSTILE}
    lesson["code_samples"][0].update(title=HOSTILE, caption=HOSTILE, code=HOSTILE)
    for claim in lesson["claims_cost"] + lesson["claims_hold"]:
        claim["claim"] = "A claim " + HOSTILE
        claim.update(
            {"why_wrong": HOSTILE, "truth": HOSTILE} if "truth" in claim else {"why": HOSTILE}
        )
    path.write_text(yaml.safe_dump(lesson))

    attempt = client.post("/quiz/start/", {"question": "fixture-countdown"})["Location"]
    claim_key = f"fixture-countdown:{lesson['claims_cost'][0]['id']}"
    client.post(f"{attempt}answer/", {"claim": claim_key, "answer": "holds"})
    pages = ["/", "/q/fixture-countdown/senior/", attempt, f"{attempt}result/", "/review/"]

    responses = {url: client.get(url) for url in pages}

    assert {url: r.status_code for url, r in responses.items()} == dict.fromkeys(pages, 200)
    assert "alert(1)" in _html(responses["/q/fixture-countdown/senior/"])  # shown as text
    assert {url: _active_markup(_html(r)) for url, r in responses.items()} == dict.fromkeys(
        pages, []
    )

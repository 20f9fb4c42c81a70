"""Pages say how each claim is known: every key point on the question page, the feedback on
every quiz claim and each claim due for review carry a "How we know" list (run the experiment,
the seed, the library source, the documentation, the measurement) and the versions it holds
for; the question page and quiz feedback name the versions the lesson was checked against."""

from __future__ import annotations

import re
import shutil

import pytest
from django.template import Context, Template

from lessons import pages
from lessons.catalog import get_claim, get_question
from lessons.evidence import Evidence
from lessons.evidence_display import evidence_row, href_safe, version_range_spoken
from lessons.lesson import KeyPoint
from tests.lessons.lessonfiles import FIXTURES, replace_once, write
from tests.lessons.quiz_support import ALPHA, QUIZ_FIXTURES, answer, start_quiz, wrong_answer

pytestmark = pytest.mark.django_db

EXPERIMENT_LINK = 'href="/lab/experiments/countdown-beyond-timeout/"'
SEED = "002_fixture-seed.txt"
CASES = f"""cases:
  - seed: {SEED}
    slug: fixture-case
    title: Fixture case <i>study</i>
    summary: A case in our words.
"""
CASE_LINK = '<a href="/evidence/cases/fixture-case/">Fixture case &lt;i&gt;study&lt;/i&gt;</a>'
FACTS = """# Broker behaviour measured on this stack

## Redis transport

1. **Copies follow the timeout.** Measured with two workers.
2. A plain item without a bold headline. It goes on.
"""
# Quiz Alpha with every kind of evidence on its first key point, and versions on a claim.
RICH_POINT = """  - point: Point one
    versions: {rabbitmq: ">=4.0,<4.3"}
    evidence:
      - experiment: countdown-beyond-timeout
        checks: [receipts]
      - measured: 1
      - seed: 002_fixture-seed.txt
        passage: a seed
      - source: {package: kombu, versions: ">=5.7,<5.8", module: kombu.transport.redis,
                 function: QoS.restore_visible, shows: "ceil = time() - self.visibility_timeout"}
      - docs: {title: "Consumer timeouts <b>guide</b>", version: RabbitMQ 4.2,
               url: "https://www.rabbitmq.com/docs/consumers",
               quote: "The default timeout value for RabbitMQ is 30 minutes.", read: 2026-12-05}
"""
RICH_CLAIM = """    truth: The true statement behind wrong claim 5 of quiz-alpha.
    tier: senior
    versions: {celery: ">=5.5"}
    evidence: [{seed: 002_fixture-seed.txt, passage: a seed}, {experiment: countdown-beyond-timeout, checks: [receipts]}]
"""


def section(html: str, css_class: str) -> str:
    """The HTML of the page's <section class="css_class">."""
    start = html.index(f'<section class="{css_class}"')
    return html[start : html.index("</section>", start)]


def key_points(html: str) -> list[str]:
    return re.findall(
        r'<li class="key-point">(.*?)</details>\s*</li>', section(html, "key-points"), re.S
    )


@pytest.fixture
def rich_lessons(settings, tmp_path):
    """The quiz fixtures, Alpha's first key point and last cost claim backed by every kind of
    evidence, with a seeds folder, its case studies and measurement notes of their own."""
    directory = tmp_path / "content"
    shutil.copytree(QUIZ_FIXTURES, directory)
    alpha = directory / "01-quiz-alpha.yaml"
    text = alpha.read_text(encoding="utf-8")
    text = replace_once(
        text,
        "  - point: Point one\n    evidence: [{experiment: countdown-beyond-timeout, checks: [receipts]}]\n",
        RICH_POINT,
    )
    text = replace_once(
        text,
        "    truth: The true statement behind wrong claim 5 of quiz-alpha.\n"
        "    tier: senior\n    evidence: [{experiment: countdown-beyond-timeout, checks: [receipts]}]\n",
        RICH_CLAIM,
    )
    alpha.write_text(text, encoding="utf-8")
    write(tmp_path / "seeds", SEED, "a seed")
    settings.SEEDS_DIR = tmp_path / "seeds"
    settings.SEED_CASES_FILE = write(tmp_path, "seed_cases.yaml", CASES)
    settings.BROKER_FACTS_FILE = write(tmp_path, "BROKER-FACTS.md", FACTS)
    settings.LESSONS_DIR = directory
    assert get_question(ALPHA) is not None, "the rich fixture must load"
    return directory


# --- the question page -------------------------------------------------------------------


def test_every_key_point_says_how_we_know_it_with_a_link_to_run_the_experiment(client, settings):
    settings.LESSONS_DIR = FIXTURES
    html = client.get("/q/fixture-countdown/").content.decode()

    points = key_points(html)
    assert len(points) == 4
    for point in points:
        assert "<summary>How we know</summary>" in point
        assert EXPERIMENT_LINK in point
        assert "Run the experiment “" in point


def test_question_page_and_tier_permalink_name_the_versions_the_lesson_was_checked_against(
    client, settings
):
    settings.LESSONS_DIR = FIXTURES
    for path in ("/q/fixture-countdown/", "/q/fixture-countdown/senior/"):
        html = client.get(path).content.decode()
        start = html.index('<header class="question-header">')
        header = html[start : html.index("</header>", start)]
        assert "<dt>Checked against</dt><dd>Celery 5.7.0, kombu 5.7.0</dd>" in header, path
        assert len(key_points(html)) == 4, path


def test_a_key_point_lists_each_kind_of_evidence_and_the_versions_it_holds_for(
    client, rich_lessons
):
    point = key_points(client.get(f"/q/{ALPHA}/").content.decode())[0]

    assert "Holds for</span> RabbitMQ 4.0 or later and before 4.3" in point
    assert EXPERIMENT_LINK in point
    assert "Measured on this stack:</span> Copies follow the timeout." in point
    assert '(<a href="/evidence/notes/1/">measurement note 1</a>)' in point
    assert f"Case study:</span> {CASE_LINK}" in point
    assert SEED not in point, "a learner sees the case's title, not the seed's file name"
    assert (
        '<a href="/evidence/source/kombu.transport.redis/QoS.restore_visible/">'
        "<code>QoS.restore_visible</code> in <code>kombu.transport.redis</code></a> "
        "(kombu 5.7 or later and before 5.8)"
    ) in point
    assert (
        '<a href="https://www.rabbitmq.com/docs/consumers" rel="external noopener noreferrer">'
        "Consumer timeouts &lt;b&gt;guide&lt;/b&gt;</a>"
    ) in point
    assert "(RabbitMQ 4.2, www.rabbitmq.com)" in point
    assert "<b>guide</b>" not in point


def test_an_experiment_the_lab_does_not_have_is_named_without_a_link(client, settings, monkeypatch):
    settings.LESSONS_DIR = FIXTURES
    monkeypatch.setattr(pages, "lab_experiment_titles", lambda: {})
    point = key_points(client.get("/q/fixture-countdown/").content.decode())[0]
    assert "/lab/experiments/" not in point
    assert "Countdown beyond timeout" in point and "(not in the lab yet)" in point


# --- quiz feedback, the score page and the review page --------------------------------------


def test_quiz_feedback_links_the_claims_evidence_and_the_checked_versions(client, rich_lessons):
    attempt = start_quiz(client, ALPHA)
    before = client.get(f"/quiz/a/{attempt}/").content.decode()
    assert "How we know" not in before, "evidence must not show before the claim is answered"

    key = f"{ALPHA}:cost-5"
    html = answer(client, attempt, key, "holds").content.decode()

    feedback = html[html.index('class="quiz-feedback"') :]
    assert "<summary>How we know</summary>" in feedback
    assert EXPERIMENT_LINK in feedback
    assert CASE_LINK in feedback
    assert "Holds for</span> Celery 5.5 or later" in feedback
    assert "Checked against Celery 5.7.0, kombu 5.7.0." in feedback


def test_the_score_page_and_the_review_page_show_a_missed_claims_evidence(client, rich_lessons):
    attempt = start_quiz(client, ALPHA)
    key = f"{ALPHA}:cost-5"
    answer(client, attempt, key, wrong_answer(get_claim(key).holds))

    result = client.get(f"/quiz/a/{attempt}/result/").content.decode()
    missed = result[result.index(f'data-key="{key}"') :]
    missed = missed[: missed.index("</details>")]
    assert EXPERIMENT_LINK in missed and CASE_LINK in missed

    review = client.get("/review/").content.decode()
    card = review[review.index(f'<li class="card" data-key="{key}"') :]
    card = card[: card.index("</details>")]
    assert "<summary>How we know</summary>" in card
    assert EXPERIMENT_LINK in card
    assert "Checked against Celery 5.7.0, kombu 5.7.0." in card


# --- what is safe to show ----------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "//evil.example/x",
        "ftp://x/y",
        "",
    ],
)
def test_a_documentation_url_that_is_not_http_is_shown_as_text_not_as_a_link(url):
    point = KeyPoint(
        "A point.",
        evidence=(
            Evidence(
                "docs",
                "label",
                url=url,
                detail=(("title", "Guide <script>x</script>"), ("version", "1.0")),
            ),
        ),
    )
    html = Template("{% load lesson_tags %}{% how_we_know point %}").render(
        Context({"point": point})
    )
    assert "<a " not in html
    assert "Documentation:</span> Guide &lt;script&gt;x&lt;/script&gt;" in html
    assert "<script>" not in html


def test_only_absolute_http_and_https_addresses_count_as_links():
    assert href_safe("https://www.rabbitmq.com/docs/") == "https://www.rabbitmq.com/docs/"
    assert href_safe("HTTP://example.org/a") == "http://example.org/a"
    for bad in (
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "/relative",
        "https://",
        "mailto:a@b",
    ):
        assert href_safe(bad) is None, bad


def test_version_ranges_read_as_words():
    assert version_range_spoken(">=4.0") == "4.0 or later"
    assert version_range_spoken(">=3.8,<=4.3") == "3.8 to 4.3"
    assert version_range_spoken(">=3.11.15,<4.3") == "3.11.15 or later and before 4.3"
    assert version_range_spoken("==5.7.*") == "5.7.*"
    assert version_range_spoken("4.1") == "4.1"


def test_a_measurement_without_its_notes_file_is_named_by_its_item(settings, tmp_path):
    settings.BROKER_FACTS_FILE = tmp_path / "missing.md"
    row = evidence_row(Evidence("measured", "m", detail=(("item", "7"),)), experiment_titles=None)
    assert (row.title, row.note) == ("measurement note 7", "")


def test_a_key_point_backed_by_an_experiment_shows_where_lab_matrix_verified_it(
    client, settings, tmp_path
):
    """The short verified-on table: one row per outcome, the series it was recorded on, from
    records whose digest matches the experiment file (a stale one is left out)."""
    import json

    from teachlab.lab.matrix.records import experiment_digest

    settings.LESSONS_DIR = FIXTURES
    settings.LAB_VERIFIED_DIR = str(tmp_path)
    slug = "countdown-beyond-timeout"
    digest = experiment_digest(slug)

    def record(celery, redis, verdict="holds", reason="", digest=digest):
        return {
            "combination": {"celery": celery, "redis": redis},
            "verdict": verdict,
            "reason": reason,
            "digest": digest,
        }

    needs = "needs kombu >=5.7 (this one has {}): the 1 s sweep is a kombu 5.7 option"
    body = {
        "records": [
            record("5.7", "6.2"),
            record("5.7", "7.0"),
            record("5.5", "7.0", "skipped", needs.format("5.5.4")),
            record("5.6", "7.0", "skipped", needs.format("5.6.2")),
            record("5.7", "6.0", "holds", digest="0" * 64),  # another version of the file
        ]
    }
    (tmp_path / f"{slug}.json").write_text(json.dumps(body))
    points = key_points(client.get("/q/fixture-countdown/").content.decode())
    shown = [p for p in points if "Verified on" in p]
    assert shown, "a key point citing countdown-beyond-timeout shows the table"
    table = shown[0]
    assert "<td>Celery 5.7 × Redis 6.2–7.0</td><td>holds</td>" in table
    assert "<td>Celery 5.5–5.6 × Redis 7.0</td><td>skipped: needs kombu &gt;=5.7</td>" in table
    assert "Redis 6.0" not in table

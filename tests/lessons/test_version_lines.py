"""The question page says, per key point, which versions it was measured on here (from the last
recorded runs of its experiments, else the lab's declared versions, and which) or which it is
only documented for; under an experiment it cites, each cited check's sentence with the value
the last run observed, or that it has not run on this server (issue 25, items 2 and 3)."""

from __future__ import annotations

import re
import shutil
from datetime import timedelta

import pytest
from django.template import Context, Template
from django.utils import timezone

from lessons.evidence import Evidence
from lessons.last_runs import LastRuns
from lessons.lesson import KeyPoint
from lessons.models import Learner
from teachlab.lab.experiments.models import Attempt
from tests.lessons.lessonfiles import replace_once
from tests.lessons.quiz_support import QUIZ_FIXTURES

pytestmark = pytest.mark.django_db

RECEIPTS_SAYS = "The one task was delivered at least three times"
DOCS_ONLY = """  - point: Point two
    evidence:
      - docs: {title: "Quorum queues", version: RabbitMQ 4.3,
               url: "https://www.rabbitmq.com/docs/quorum-queues",
               quote: "Quorum queues keep track of the number of unsuccessful delivery attempts.",
               read: 2026-12-05}
"""


@pytest.fixture
def alpha(settings, tmp_path):
    """Quiz Alpha: point one cites countdown-beyond-timeout (check `receipts`), point two
    only a documentation page for RabbitMQ 4.3."""
    directory = tmp_path / "content"
    shutil.copytree(QUIZ_FIXTURES, directory)
    path = directory / "01-quiz-alpha.yaml"
    text = replace_once(
        path.read_text(encoding="utf-8"),
        "  - point: Point two\n    evidence: [{experiment: countdown-beyond-timeout, checks: [receipts]}]\n",
        DOCS_ONLY,
    )
    path.write_text(text, encoding="utf-8")
    settings.LESSONS_DIR = directory
    return "/q/quiz-alpha/"


def points(client, url: str) -> list[str]:
    html = client.get(url).content.decode()
    start = html.index('<section class="key-points"')
    section = html[start : html.index("</section>", start)]
    return re.findall(r'<li class="key-point">(.*?)</details>\s*</li>', section, re.S)


def attempt(*, observed: str, redis: str, minutes_ago: int, status=Attempt.Status.DONE):
    """An attempt of countdown-beyond-timeout as the runner stores it: the verdict's checks in
    file order (`receipts` has no `id`), and the versions its lane's workers reported."""
    checks = ["receipts", "redelivered", "executions", "start_after_due", "last_start_after_due"]
    at = timezone.now() - timedelta(minutes=minutes_ago)
    row = Attempt.objects.create(
        learner=Learner.objects.create(),
        slug="countdown-beyond-timeout",
        status=status,
        finished_at=at if status == Attempt.Status.DONE else None,
        result={
            "checks": [
                {"id": "", "says": what, "run": "main", "passed": True, "observed": observed}
                for what in checks
            ],
            "versions": {
                "redis-short": {"redis": redis, "celery": "5.7.0", "kombu": "5.7.0", "pool": "x"}
            },
        },
    )
    return row


def test_a_key_point_says_measured_here_with_the_lab_versions_until_a_run_is_recorded(
    client, alpha
):
    one, two = points(client, alpha)[:2]

    assert "measured here on Redis 7.0.15, Celery 5.7.0, kombu 5.7.0" in one
    assert "declared versions; no run recorded on this server yet" in one
    assert "documented for RabbitMQ 4.3 (not measured here)" in two
    assert "measured here on" not in two


def test_a_key_point_says_the_versions_its_experiment_last_ran_on(client, alpha):
    attempt(observed="9", redis="7.0.1", minutes_ago=30)
    attempt(observed="3", redis="7.0.99", minutes_ago=5)
    attempt(observed="", redis="6.0.0", minutes_ago=1, status=Attempt.Status.RUNNING)

    one = points(client, alpha)[0]

    assert "measured here on Redis 7.0.99, Celery 5.7.0, kombu 5.7.0" in one
    assert "as its last runs here recorded them" in one
    assert "7.0.1," not in one and "6.0.0" not in one


def test_a_cited_check_shows_its_sentence_and_not_run_yet_before_any_attempt(client, alpha):
    one = points(client, alpha)[0]

    check = re.search(r'<li class="evidence-check">(.*?)</li>', one, re.S).group(1)
    assert RECEIPTS_SAYS in check
    assert "not run yet on this server" in check


def test_a_cited_check_shows_the_value_the_latest_finished_attempt_observed(client, alpha):
    attempt(observed="9", redis="7.0.15", minutes_ago=30)
    latest = attempt(observed="3", redis="7.0.15", minutes_ago=5)
    attempt(observed="", redis="7.0.15", minutes_ago=1, status=Attempt.Status.RUNNING)

    one = points(client, alpha)[0]

    check = re.search(r'<li class="evidence-check">(.*?)</li>', one, re.S).group(1)
    assert RECEIPTS_SAYS in check
    assert f"last run ({latest.finished_at:%Y-%m-%d}) observed 3)" in check
    assert "observed 9" not in one
    # only the cited check is listed, not the experiment's other four
    assert one.count('<li class="evidence-check') == 1


def test_a_failed_check_in_the_last_run_is_marked(client, alpha):
    row = attempt(observed="1", redis="7.0.15", minutes_ago=1)
    row.result["checks"][0]["passed"] = False
    row.save()

    one = points(client, alpha)[0]

    assert 'class="evidence-check evidence-check-failed"' in one
    assert "observed 1; the check failed" in one


def test_a_page_that_read_only_other_experiments_runs_still_shows_this_ones_last_run():
    attempt(observed="3", redis="7.0.15", minutes_ago=1)
    point = KeyPoint(
        "A point.",
        evidence=(
            Evidence(
                "experiment",
                "lab experiment countdown-beyond-timeout",
                experiment="countdown-beyond-timeout",
                detail=(("experiment", "countdown-beyond-timeout"),),
                checks=("receipts",),
            ),
        ),
    )
    html = Template("{% load lesson_tags %}{% how_we_know point %}").render(
        Context({"point": point, "lab_last_runs": LastRuns({}, {"quorum-delivery-limit"})})
    )

    assert "observed 3" in html
    assert "not run yet" not in html

"""The home page as a course: what the app is, "start here" in course order, what is due for
review, the ways to practise; each question page ending with what to do next; the favicon;
key points as rendered, sanitised Markdown."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.templatetags.static import static
from django.test import Client

from tests.lessons.lessonfiles import FIXTURES, replace_once
from tests.lessons.test_course import stepped

pytestmark = pytest.mark.django_db

COUNTDOWN = "fixture-countdown"
ACKS_LATE = "fixture-acks-late"


@pytest.fixture(autouse=True)
def lesson_dir(settings, tmp_path):
    """The two fixture lessons with a course that reverses their index order: acks-late
    (made middle level) is step 1, countdown step 2."""
    directory = tmp_path / "content"
    shutil.copytree(FIXTURES, directory)
    countdown = directory / "01-fixture-countdown.yaml"
    acks = directory / "02-fixture-acks-late.yaml"
    countdown.write_text(stepped(countdown.read_text(), 2))
    acks_text = replace_once(acks.read_text(), "level: senior", "level: middle")
    acks.write_text(stepped(acks_text, 1))
    settings.LESSONS_DIR = directory
    return directory


def section(html: str, ident: str) -> str:
    """The <section> whose id (or first class) is `ident`; sections here do not nest."""
    match = re.search(rf'<section (?:class|id)="{ident}[" ].*?</section>', html, re.S)
    match = match or re.search(rf'<section[^>]*id="{ident}".*?</section>', html, re.S)
    assert match, f"no section {ident}"
    return match.group(0)


def home(client: Client) -> str:
    response = client.get("/")
    assert response.status_code == 200
    return response.content.decode()


def test_home_says_what_the_app_is_and_links_quiz_lab_experiments_and_progress(client):
    html = home(client)
    assert "teachlab prepares you for the senior interview questions" in html
    practise = section(html, "practise")
    for href in ('href="/quiz/"', 'href="/lab/"', 'href="/lab/experiments/"', 'href="/progress/"'):
        assert href in practise


def test_start_here_lists_the_course_order_from_the_lesson_files(client):
    html = home(client)
    course = section(html, "start-here")

    titles = re.findall(r'<li class="course-step[^"]*">\s*<a href="/q/([^/]+)/"', course)
    assert titles == [ACKS_LATE, COUNTDOWN]  # course_step order, not index order
    assert re.search(rf'id="start-here-link" href="/q/{ACKS_LATE}/">Start here: ', course)
    # the list of every question follows the same course order, not the files' order
    all_questions = html[html.index('id="all-questions"') :]
    assert all_questions.index("When does acks_late help?") < all_questions.index(
        "Where does a countdown task wait?"
    )


def test_start_here_moves_on_once_a_step_is_read_and_quizzed(client):
    client.get(f"/q/{ACKS_LATE}/senior/")  # all three tiers
    assert 'href="/q/fixture-acks-late/">Start here' not in home(client)  # started, not done
    assert "Continue with step 1" in home(client)

    response = client.post("/quiz/start/", {"question": ACKS_LATE})
    attempt = response["Location"].rstrip("/").rsplit("/", 1)[-1]
    page = client.get(f"/quiz/a/{attempt}/").content.decode()
    claim = re.search(r'name="claim" value="([^"]+)"', page).group(1)
    client.post(f"/quiz/a/{attempt}/answer/", {"claim": claim, "answer": "holds"})

    course = section(home(client), "start-here")
    assert f'id="start-here-link" href="/q/{COUNTDOWN}/">Continue with step 2: ' in course
    assert "✓ </span>done" in course


def test_home_shows_what_is_due_for_review_and_links_the_review_page(client):
    assert "Nothing is due today" in section(home(client), "due-for-review")

    client.post(f"/q/{COUNTDOWN}/basics/rate/", {"rating": "missed"})

    due = section(home(client), "due-for-review")
    assert "<strong>1</strong> item due today" in due
    assert f'href="/q/{COUNTDOWN}/">Where does a countdown task wait?</a>' in due
    assert 'href="/review/">Review now</a>' in due


def test_a_question_page_ends_with_quiz_lab_experiment_and_the_next_course_step(client):
    html = client.get(f"/q/{ACKS_LATE}/").content.decode()
    last = section(html, "next-steps")

    assert html.rindex("<section") == html.index(last)  # the last section of the page
    assert 'action="/quiz/start/"' in last and f'name="question" value="{ACKS_LATE}"' in last
    assert ">Quiz this question</button>" in last
    assert 'href="/lab/">Try it in the lab</a>' in last
    assert 'href="/lab/experiments/countdown-beyond-timeout/">Run the experiment' in last
    assert f'Next on the course path: <a href="/q/{COUNTDOWN}/">' in last

    final = section(client.get(f"/q/{COUNTDOWN}/").content.decode(), "next-steps")
    assert "This is the last step of the course path" in final


def test_key_points_render_markdown_and_drop_script(client, lesson_dir):
    path = lesson_dir / "01-fixture-countdown.yaml"
    text = replace_once(
        path.read_text(),
        "  - point: A worker fetches the message right away and keeps it in memory.",
        "  - point: 'A worker runs `apply_async` at once <script>alert(1)</script> and **keeps** it.'",
    )
    path.write_text(text)

    html = client.get(f"/q/{COUNTDOWN}/").content.decode()
    points = section(html, "key-points")

    assert "<code>apply_async</code>" in points and "<strong>keeps</strong>" in points
    assert "`" not in re.sub(r"<[^>]+>", "", points)  # no literal backticks left
    assert "<script" not in points and "alert(1)" not in points


def test_favicon_is_linked_from_every_page_and_favicon_ico_does_not_404(client):
    icon_url = static("favicon.svg")  # a hashed name when the static files are collected
    assert re.fullmatch(r"/static/favicon(\.[0-9a-f]+)?\.svg", icon_url)
    html = home(client)
    assert f'<link rel="icon" href="{icon_url}" type="image/svg+xml">' in html

    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == icon_url
    # The file itself is served by WhiteNoise (the browser walk fetches it from a live server).
    found = finders.find("favicon.svg")
    assert found and "<svg" in Path(found).read_text()

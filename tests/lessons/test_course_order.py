"""One order for the real lessons: the course path (each file's `course_step`) drives the home
page's "All questions" list, the question page's Previous/Next links and the data the `n`/`p`
keys read. Lessons refer to each other by link, and the validator refuses a link to a question
that does not exist or a question named by its number."""

from __future__ import annotations

import re

import pytest

from lessons.course import course_order
from lessons.loader import check_files, lesson_dir
from tests.lessons.lessonfiles import FIXTURES, line_of, replace_once, write


def real_course() -> list[str]:
    questions = check_files(sorted(lesson_dir().glob("*.yaml"))).questions
    if len(questions) < 2:
        pytest.skip("fewer than two lesson files in lessons/content")
    slugs = [q.slug for q in course_order(questions)]
    assert slugs != [q.slug for q in questions], "the test needs a course unlike file order"
    return slugs


def nav_link(html: str, rel: str) -> str | None:
    nav = re.search(r'<nav class="question-nav".*?</nav>', html, re.S).group(0)
    match = re.search(rf'<a href="/q/([^/]+)/" rel="{rel}">', nav)
    return match.group(1) if match else None


def key_target(html: str, attribute: str) -> str | None:
    """The question the `n` (data-next-url) or `p` (data-previous-url) key goes to."""
    url = re.search(rf'{attribute}="([^"]*)"', html).group(1)
    return url.removeprefix("/q/").removesuffix("/") or None


@pytest.mark.django_db
def test_next_walks_from_the_first_course_step_to_the_last_seeing_every_question_once(client):
    course = real_course()
    seen = []
    slug: str | None = course[0]
    while slug is not None and len(seen) <= len(course):
        html = client.get(f"/q/{slug}/").content.decode()
        seen.append(slug)
        following = nav_link(html, "next")
        assert key_target(html, "data-next-url") == following, f"`n` on {slug}"
        assert nav_link(html, "prev") == key_target(html, "data-previous-url"), f"`p` on {slug}"
        assert nav_link(html, "prev") == (seen[-2] if len(seen) > 1 else None), slug
        slug = following
    assert seen == course


@pytest.mark.django_db
def test_home_lists_all_questions_in_course_order(client):
    course = real_course()
    html = client.get("/").content.decode()
    listed = html[html.index('id="all-questions"') :]
    assert re.findall(r'<h3><a href="/q/([^/]+)/">', listed) == course


def linked(text: str, target: str) -> str:
    """The countdown fixture with a link to `target` in its basics tier."""
    return replace_once(
        text,
        "A worker pulls the message almost at",
        f"As [the other question]({target}) shows, a worker pulls the message almost at",
    )


def test_a_link_to_a_question_no_file_declares_is_refused_on_its_line(tmp_path):
    text = linked((FIXTURES / "01-fixture-countdown.yaml").read_text(), "/q/no-such-question/")
    write(tmp_path, "01.yaml", text)
    write(tmp_path, "02.yaml", (FIXTURES / "02-fixture-acks-late.yaml").read_text())

    checked = check_files(sorted(tmp_path.glob("*.yaml")))

    [problem] = checked.problems
    assert problem.line == line_of(text, "[the other question]")
    assert problem.message == (
        "tiers.basics: links to question 'no-such-question', which no lesson file declares"
    )
    assert [q.slug for q in checked.questions] == ["fixture-acks-late"]


def test_a_link_to_a_missing_tier_is_refused_and_a_sound_link_is_kept(tmp_path):
    countdown = (FIXTURES / "01-fixture-countdown.yaml").read_text()
    write(tmp_path, "01.yaml", linked(countdown, "/q/fixture-acks-late/deep/"))
    write(tmp_path, "02.yaml", (FIXTURES / "02-fixture-acks-late.yaml").read_text())
    [problem] = check_files(sorted(tmp_path.glob("*.yaml"))).problems
    assert problem.message.startswith("tiers.basics: links to tier 'deep' of 'fixture-acks-late'")

    write(tmp_path, "01.yaml", linked(countdown, "/q/fixture-acks-late/solid/#tier-solid"))
    assert check_files(sorted(tmp_path.glob("*.yaml"))).problems == []


def test_a_question_named_by_number_is_refused_on_its_line(tmp_path):
    text = replace_once(
        (FIXTURES / "01-fixture-countdown.yaml").read_text(),
        "A worker pulls the message almost at",
        "As question 5 shows, a worker pulls the message almost at",
    )
    write(tmp_path, "01.yaml", text)

    [problem] = check_files(sorted(tmp_path.glob("*.yaml"))).problems

    assert problem.line == line_of(text, "As question 5 shows")
    assert problem.message.startswith("tiers.basics: 'question 5' numbers a question")


@pytest.mark.django_db
def test_a_link_between_questions_renders_as_a_plain_link_on_the_page(client, settings, tmp_path):
    write(
        tmp_path,
        "01.yaml",
        linked((FIXTURES / "01-fixture-countdown.yaml").read_text(), "/q/fixture-acks-late/"),
    )
    write(tmp_path, "02.yaml", (FIXTURES / "02-fixture-acks-late.yaml").read_text())
    settings.LESSONS_DIR = tmp_path

    html = client.get("/q/fixture-countdown/basics/").content.decode()

    assert (
        '<a href="/q/fixture-acks-late/" rel="noopener noreferrer">the other question</a>' in html
    )


@pytest.mark.browser
def test_the_n_key_alone_follows_the_course_from_home_to_the_last_step(page, live_server_url):
    course = real_course()
    page.goto(f"{live_server_url}/")
    page.locator("#start-here-link").click()
    seen = []
    for _ in range(len(course) + 1):
        page.wait_for_load_state()
        slug = page.locator("#question").get_attribute("data-slug")
        seen.append(slug)
        if slug == course[-1] or len(seen) > len(course):
            break
        page.keyboard.press("n")
        page.wait_for_url(lambda url, left=slug: f"/q/{left}/" not in url)
    assert seen == course
    # On the last step `n` leads nowhere: the page stays put.
    page.keyboard.press("n")
    page.wait_for_timeout(300)
    assert page.url == f"{live_server_url}/q/{course[-1]}/"

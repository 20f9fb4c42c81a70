"""The catalog the app serves: questions and claims read from the lesson files, reloaded
when a file changes, a broken file left out with the validator's messages."""

from __future__ import annotations

import os
import shutil

import pytest

from lessons import catalog
from lessons.catalog import (
    LessonError,
    all_claims,
    all_questions,
    catalog_problems,
    get_claim,
    get_question,
)
from lessons.loader import check_files, load_file
from lessons.rendering import count_words, highlight_code, render_markdown
from tests.lessons.lessonfiles import FIXTURES, GOOD, good_text, replace_once, write


@pytest.fixture
def lesson_dir(settings, tmp_path):
    """A private copy of the fixture lessons the app reads from."""
    directory = tmp_path / "content"
    shutil.copytree(FIXTURES, directory)
    settings.LESSONS_DIR = directory
    return directory


def test_questions_come_sorted_by_order_with_every_field(lesson_dir):
    questions = all_questions()

    assert [q.slug for q in questions] == ["fixture-countdown", "fixture-acks-late"]
    q = questions[0]
    assert q.title == "Where does a countdown task wait?"
    assert (q.level, q.importance, q.frequency) == ("middle", "high", "often")
    assert len(q.key_points) == 4
    assert set(q.tiers) == {"basics", "solid", "senior"}
    assert [s.language for s in q.code_samples] == ["python", "redis"]
    assert q.code_samples[1].caption.startswith("Each member is a delivery tag")
    assert set(q.go_deeper) == {"junior", "middle", "senior", "principal"}
    assert q.followups[0].question == "What happens to held messages on a warm shutdown?"
    assert q.experiments == ["countdown-beyond-timeout"]
    assert q.path == lesson_dir / "01-fixture-countdown.yaml"


def test_cost_and_hold_claims_carry_their_explanations(lesson_dir):
    cost = get_claim("fixture-countdown:waits-in-redis")
    hold = get_claim("fixture-countdown:due-table")

    assert cost.holds is False
    assert cost.text == "A countdown message waits in Redis until it is due."
    assert cost.why == "The worker fetches it at once and holds it in memory."
    assert cost.truth == "Redis only keeps an unacked copy that it may restore."
    assert cost.tier == "basics"
    assert hold.holds is True
    assert hold.why == "It is queryable, cancellable and survives restarts."
    assert hold.truth is None
    assert hold.question_slug == "fixture-countdown"


def test_all_claims_covers_every_question(lesson_dir):
    keys = {c.key for c in all_claims()}
    assert len(keys) == 16
    assert "fixture-acks-late:memory-free" in keys


def test_unknown_slug_and_claim_are_none(lesson_dir):
    assert get_question("no-such-question") is None
    assert get_claim("fixture-countdown:no-such-claim") is None
    assert get_claim("nonsense") is None


def test_an_edited_file_is_read_again_without_a_restart(lesson_dir):
    assert get_question("fixture-countdown").title == "Where does a countdown task wait?"
    path = lesson_dir / "01-fixture-countdown.yaml"
    path.write_text(
        replace_once(good_text(), "title: Where does a countdown task wait?", "title: Edited"),
        encoding="utf-8",
    )
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))

    assert get_question("fixture-countdown").title == "Edited"


def _edit_title(lesson_dir, title: str) -> None:
    path = lesson_dir / "01-fixture-countdown.yaml"
    path.write_text(
        replace_once(good_text(), "title: Where does a countdown task wait?", f"title: {title}"),
        encoding="utf-8",
    )
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


def test_an_edit_shows_once_the_recheck_interval_has_passed(lesson_dir, settings, monkeypatch):
    settings.LESSONS_RECHECK_SECONDS = 60
    now = [1000.0]
    monkeypatch.setattr(catalog, "_clock", lambda: now[0])
    assert get_question("fixture-countdown").title == "Where does a countdown task wait?"
    _edit_title(lesson_dir, "Edited")

    now[0] += 59
    assert get_question("fixture-countdown").title == "Where does a countdown task wait?"
    now[0] += 2
    assert get_question("fixture-countdown").title == "Edited"


def test_within_the_interval_the_folder_is_looked_at_once(lesson_dir, settings, monkeypatch):
    settings.LESSONS_RECHECK_SECONDS = 60
    looks = []
    real = catalog.lesson_files
    monkeypatch.setattr(catalog, "lesson_files", lambda d=None: looks.append(d) or real(d))
    for _ in range(50):
        all_questions()
        get_claim("fixture-countdown:due-table")
    assert len(looks) == 1


def test_unchanged_files_are_not_parsed_again(lesson_dir):
    first = catalog.load_catalog()
    assert catalog.load_catalog() is first


def test_a_new_file_appears_and_a_removed_one_goes(lesson_dir):
    (lesson_dir / "02-fixture-acks-late.yaml").unlink()
    assert [q.slug for q in all_questions()] == ["fixture-countdown"]

    text = replace_once(good_text(), "slug: fixture-countdown", "slug: brand-new")
    write(lesson_dir, "03-new.yaml", replace_once(text, "order: 1\n", "order: 3\n"))
    assert [q.slug for q in all_questions()] == ["fixture-countdown", "brand-new"]


def test_a_broken_file_is_left_out_and_the_rest_keep_working(lesson_dir):
    broken = replace_once(
        (lesson_dir / "02-fixture-acks-late.yaml").read_text(), "level: senior", "level: wizard"
    )
    (lesson_dir / "02-fixture-acks-late.yaml").write_text(broken)

    assert [q.slug for q in all_questions()] == ["fixture-countdown"]
    [problem] = catalog_problems()
    assert str(problem).endswith(
        "02-fixture-acks-late.yaml:7: level: unknown level 'wizard' "
        "(expected one of: junior, middle, senior, principal)"
    )
    # the validator reports the very same text
    assert [str(p) for p in check_files(sorted(lesson_dir.glob("*.yaml"))).problems] == [
        str(problem)
    ]


def test_require_sound_raises_with_every_problem(lesson_dir):
    (lesson_dir / "01-fixture-countdown.yaml").write_text(
        replace_once(good_text(), "importance: high", "importance: huge")
    )
    with pytest.raises(LessonError) as error:
        catalog.require_sound()
    assert "importance: unknown importance 'huge'" in str(error.value)
    assert error.value.problems[0].line == 8


def test_load_file_refuses_a_bad_file(tmp_path):
    path = write(tmp_path, "bad.yaml", "slug: [\n")
    with pytest.raises(LessonError) as error:
        load_file(path)
    assert error.value.problems[0].message.startswith("YAML syntax error")


def test_load_file_reads_a_sound_file():
    assert load_file(GOOD).slug == "fixture-countdown"


def test_markdown_keeps_tables_and_code_and_strips_scripts():
    html = render_markdown(
        "# Title\n\n<script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "[docs](https://docs.celeryq.dev) and [bad](javascript:alert(1))\n\n"
        "```python\nx = 1\n```\n"
    )
    assert "<script" not in html
    assert "<table" in html and "<td>1</td>" in html
    assert '<a href="https://docs.celeryq.dev" rel="noopener noreferrer">docs</a>' in html
    assert "javascript:" not in html
    assert '<div class="highlight">' in html
    assert "<h1" not in html and "<h3>Title</h3>" in html


def test_code_samples_are_highlighted_and_escaped():
    html = highlight_code("if a < b:\n    print('<b>')\n", "python")
    assert '<span class="k">if</span>' in html
    assert "&lt;b&gt;" in html and "<b>" not in html
    assert "ZRANGE" in highlight_code("ZRANGE key 0 -1", "redis")


def test_word_count_leaves_out_code_and_table_punctuation():
    text = "One two three.\n\n```python\nnot counted at all\n```\n\n| a | b |\n|---|---|\n- four\n"
    assert count_words(text) == 6  # One two three. a b four

"""The "start here" path: its order comes from each lesson's `course_step`, and the validator
refuses a step used twice or a path that goes down in level, on the line to fix."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from lessons.course import course_order
from lessons.loader import check_file, check_files, lesson_dir
from lessons.schema import LEVELS
from tests.lessons.lessonfiles import FIXTURES, line_of, replace_once, write

COUNTDOWN = (FIXTURES / "01-fixture-countdown.yaml").read_text(encoding="utf-8")
ACKS_LATE = (FIXTURES / "02-fixture-acks-late.yaml").read_text(encoding="utf-8")


def stepped(text: str, step: int | str) -> str:
    """The lesson with `course_step: <step>` under its frequency line."""
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("frequency:"))
    return "".join([*lines[: at + 1], f"course_step: {step}\n", *lines[at + 1 :]])


def third(text: str) -> str:
    """A third sound lesson: the countdown fixture under another slug and order."""
    text = replace_once(text, "slug: fixture-countdown", "slug: fixture-third")
    return replace_once(text, "order: 1\n", "order: 3\n")


def test_course_order_follows_course_step_not_index_order_and_unstepped_lessons_follow(tmp_path):
    # Index order: countdown (1), acks-late (2), third (3). Course: acks-late, countdown, third.
    write(tmp_path, "01.yaml", stepped(COUNTDOWN, 2))
    acks = replace_once(ACKS_LATE, "level: senior", "level: middle")
    write(tmp_path, "02.yaml", stepped(acks, 1))
    write(tmp_path, "03.yaml", third(COUNTDOWN))

    checked = check_files(sorted(tmp_path.glob("*.yaml")))

    assert checked.problems == []
    assert [q.slug for q in checked.questions] == [
        "fixture-countdown",
        "fixture-acks-late",
        "fixture-third",
    ]
    assert [q.slug for q in course_order(checked.questions)] == [
        "fixture-acks-late",
        "fixture-countdown",
        "fixture-third",
    ]


def test_the_real_course_starts_at_middle_level_and_never_goes_down():
    questions = check_files(sorted(lesson_dir().glob("*.yaml"))).questions
    if not questions:
        pytest.skip("no lesson files in lessons/content yet")
    path = course_order(questions)
    assert all(q.course_step is not None for q in path), "every real lesson is on the path"
    levels = [LEVELS.index(q.level) for q in path]
    assert path[0].level == "middle"
    assert levels == sorted(levels)


def test_a_course_step_used_twice_is_refused_on_its_line(tmp_path):
    write(tmp_path, "01.yaml", stepped(COUNTDOWN, 1))
    second = stepped(ACKS_LATE, 1)
    write(tmp_path, "02.yaml", second)

    checked = check_files(sorted(tmp_path.glob("*.yaml")))

    [problem] = checked.problems
    assert problem.path.endswith("02.yaml")
    assert problem.line == line_of(second, "course_step:")
    assert problem.message.startswith("course_step: duplicate course step 1 (also in ")
    assert [q.slug for q in checked.questions] == ["fixture-countdown"]


def test_a_course_that_goes_down_in_level_is_refused_on_its_line(tmp_path):
    # acks-late is senior at step 1, countdown middle at step 2: the path goes down.
    first = stepped(COUNTDOWN, 2)
    write(tmp_path, "01.yaml", first)
    write(tmp_path, "02.yaml", stepped(ACKS_LATE, 1))
    out = StringIO()

    with pytest.raises(SystemExit) as exit_info:
        call_command("validatelessons", *map(str, sorted(tmp_path.glob("*.yaml"))), stdout=out)

    assert exit_info.value.code == 1
    expected = (
        f"{tmp_path / '01.yaml'}:{line_of(first, 'course_step:')}: course_step: step 2 is a "
        "middle question after step 1, a senior one"
    )
    assert expected in out.getvalue()


def test_a_course_step_below_one_or_not_a_number_is_refused(tmp_path):
    zero = write(tmp_path, "zero.yaml", stepped(COUNTDOWN, 0))
    word = write(tmp_path, "word.yaml", stepped(COUNTDOWN, "first"))

    _, zero_problems = check_file(zero)
    _, word_problems = check_file(word)

    assert [(p.line, p.message) for p in zero_problems] == [
        (
            line_of(zero.read_text(), "course_step"),
            "course_step: expected a step of 1 or more, found 0",
        )
    ]
    assert [p.message for p in word_problems] == [
        "course_step: expected a whole number, found 'first'"
    ]

"""validatelessons: each kind of broken lesson file gets its own message, on the line an
author has to fix, and the command exits 1; sound files pass; --json summarises them."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command

from lessons.loader import check_file, check_files
from tests.lessons.lessonfiles import FIXTURES, good_text, line_of, replace_once, write
from tests.stack import manage

SOLID_BLOCK = re.compile(r"^  solid: \|\n(?:    .*\n|\n)*?(?=  senior: )", re.MULTILINE)
SENIOR_BLOCK = re.compile(r"^  senior: \|\n(?:    .*\n|\n)*?(?=code_samples:)", re.MULTILINE)
LAST_COST_CLAIM = (
    "  - id: memory-free\n"
    "    claim: Holding delayed tasks costs workers nothing.\n"
    "    why_wrong: Every held message sits in the worker process until it runs.\n"
    "    truth: Many long countdowns raise worker memory and restart impact.\n"
    "    tier: senior\n"
)
LAST_HOLD_CLAIM = (
    "  - id: due-table\n"
    "    claim: A due-time table is a sound home for long delays.\n"
    "    why: It is queryable, cancellable and survives restarts.\n"
    "    tier: senior\n"
)
BASICS_LAST_LINE = "    runs the message is unacknowledged, so Redis may hand it out again.\n"
SOLID_LAST_LINE = "    delays into a scheduler table that enqueues work when it is due.\n"


def _drop_table(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("    |"))


# (case id, how to break the good file, expected message, the line it must point at)
CASES = [
    (
        "missing-tier",
        lambda t: SOLID_BLOCK.sub("", t),
        "tiers: missing tier 'solid'",
        lambda t: line_of(t, "tiers:"),
    ),
    (
        "unknown-field",
        lambda t: t + "difficulty: hard\n",
        "lesson: unknown field 'difficulty'",
        lambda t: line_of(t, "difficulty: hard"),
    ),
    (
        "unknown-field-in-code-sample",
        lambda t: replace_once(t, "    language: python\n", "    language: python\n    lang: py\n"),
        "code_samples[0]: unknown field 'lang'",
        lambda t: line_of(t, "lang: py"),
    ),
    (
        "missing-top-level-field",
        lambda t: replace_once(t, "importance: high\n", ""),
        "lesson: missing field 'importance'",
        lambda t: 1,
    ),
    (
        "duplicate-field",
        lambda t: replace_once(t, "level: middle\n", "level: middle\ntitle: Again\n"),
        "lesson: duplicate field 'title' (first on line 3)",
        lambda t: line_of(t, "title: Again"),
    ),
    (
        "cost-claim-without-why-wrong",
        lambda t: replace_once(
            t, "    why_wrong: The worker fetches it at once and holds it in memory.\n", ""
        ),
        "claims_cost[0]: missing field 'why_wrong'",
        lambda t: line_of(t, "- id: waits-in-redis"),
    ),
    (
        "cost-claim-without-truth",
        lambda t: replace_once(
            t, "    truth: Delivery is at least once; design for duplicates.\n", ""
        ),
        "claims_cost[1]: missing field 'truth'",
        lambda t: line_of(t, "- id: delivered-once"),
    ),
    (
        "hold-claim-without-why",
        lambda t: replace_once(
            t, "    why: It is queryable, cancellable and survives restarts.\n", ""
        ),
        "claims_hold[2]: missing field 'why'",
        lambda t: line_of(t, "- id: due-table"),
    ),
    (
        "unknown-code-language",
        lambda t: replace_once(t, "language: python", "language: rust"),
        "code_samples[0].language: unknown code language 'rust'",
        lambda t: line_of(t, "language: rust"),
    ),
    (
        "basics-over-word-limit",
        lambda t: replace_once(
            t, BASICS_LAST_LINE, BASICS_LAST_LINE + "    " + "word " * 30 + "\n"
        ),
        "tiers.basics: 70 words, over the limit of 60",
        lambda t: line_of(t, "  basics: |"),
    ),
    (
        "solid-over-word-limit",
        lambda t: replace_once(t, SOLID_LAST_LINE, SOLID_LAST_LINE + "    " + "word " * 50 + "\n"),
        "tiers.solid: 133 words, over the limit of 130",
        lambda t: line_of(t, "  solid: |"),
    ),
    (
        "senior-under-word-minimum",
        lambda t: SENIOR_BLOCK.sub(
            "  senior: |\n    Too short.\n\n    | a | b |\n    |---|---|\n    | 1 | 2 |\n", t
        ),
        "tiers.senior: 6 words, under the minimum of 500",
        lambda t: line_of(t, "  senior: |"),
    ),
    (
        "senior-without-table",
        _drop_table,
        "tiers.senior: no Markdown table (the senior tier needs at least one)",
        lambda t: line_of(t, "  senior: |"),
    ),
    (
        "too-few-key-points",
        lambda t: replace_once(
            t,
            "  - Redis puts it back in the queue once the visibility timeout passes.\n"
            "  - Long countdowns therefore invite duplicate deliveries.\n",
            "",
        ),
        "key_points: expected 4 to 6 items, found 2",
        lambda t: line_of(t, "key_points:"),
    ),
    (
        "too-many-key-points",
        lambda t: replace_once(t, "key_points:\n", "key_points:\n  - one\n  - two\n  - three\n"),
        "key_points: expected 4 to 6 items, found 7",
        lambda t: line_of(t, "key_points:"),
    ),
    (
        "too-few-cost-claims",
        lambda t: replace_once(t, LAST_COST_CLAIM, ""),
        "claims_cost: expected at least 5 items, found 4",
        lambda t: line_of(t, "claims_cost:"),
    ),
    (
        "too-few-hold-claims",
        lambda t: replace_once(t, LAST_HOLD_CLAIM, ""),
        "claims_hold: expected at least 3 items, found 2",
        lambda t: line_of(t, "claims_hold:"),
    ),
    (
        "too-few-followups",
        lambda t: replace_once(
            t,
            "  - question: Does `acks_late` change where the message waits?\n"
            "    answer: No. It changes when the ack is sent, not where the delayed message is held.\n",
            "",
        ),
        "followups: expected at least 2 items, found 1",
        lambda t: line_of(t, "followups:"),
    ),
    (
        "missing-go-deeper-level",
        lambda t: replace_once(
            t,
            "  principal: When is a due-time table in your database better than broker delays?\n",
            "",
        ),
        "go_deeper: missing level 'principal'",
        lambda t: line_of(t, "go_deeper:"),
    ),
    (
        "bad-level",
        lambda t: replace_once(t, "level: middle", "level: expert"),
        "level: unknown level 'expert' (expected one of: junior, middle, senior, principal)",
        lambda t: line_of(t, "level: expert"),
    ),
    (
        "bad-frequency",
        lambda t: replace_once(t, "frequency: often", "frequency: daily"),
        "frequency: unknown frequency 'daily'",
        lambda t: line_of(t, "frequency: daily"),
    ),
    (
        "bad-code-sample-tier",
        lambda t: replace_once(t, "    tier: basics\n    code:", "    tier: expert\n    code:"),
        "code_samples[0].tier: unknown tier 'expert'",
        lambda t: line_of(t, "tier: expert"),
    ),
    (
        "order-not-a-number",
        lambda t: replace_once(t, "order: 1\n", "order: first\n"),
        "order: expected a whole number, found 'first'",
        lambda t: line_of(t, "order: first"),
    ),
    (
        "bad-slug",
        lambda t: replace_once(t, "slug: fixture-countdown", "slug: Fixture_Countdown"),
        "slug: 'Fixture_Countdown' must be lowercase letters, digits and hyphens",
        lambda t: 1,
    ),
    (
        "duplicate-claim-id",
        lambda t: replace_once(t, "- id: timeout-free", "- id: waits-in-redis"),
        "duplicate claim id 'waits-in-redis' (first on line 111)",
        lambda t: line_of(t, "- id: waits-in-redis", start=112),
    ),
    (
        "empty-tier",
        lambda t: replace_once(t, "  junior: What does acknowledging a message mean?", "  junior:"),
        "go_deeper.junior: is empty",
        lambda t: line_of(t, "  junior:"),
    ),
    (
        "yaml-syntax-error",
        lambda t: replace_once(
            t, "title: Where does a countdown task wait?", "title: Where: does it wait?"
        ),
        "YAML syntax error: mapping values are not allowed here",
        lambda t: line_of(t, "title: Where: does it wait?"),
    ),
    (
        "yaml-bad-indentation",
        lambda t: replace_once(t, "  middle: Which setting", "   middle: Which setting"),
        "YAML syntax error",
        lambda t: line_of(t, "   middle: Which setting"),
    ),
    (
        "empty-file",
        lambda t: "",
        "the file is empty",
        lambda t: 1,
    ),
]


@pytest.mark.parametrize(
    ("mutate", "message", "expected_line"),
    [pytest.param(m, msg, line, id=case) for case, m, msg, line in CASES],
)
def test_each_kind_of_broken_file_is_reported_on_its_line(tmp_path, mutate, message, expected_line):
    text = mutate(good_text())
    path = write(tmp_path, "broken.yaml", text)

    question, problems = check_file(path)

    assert question is None, "a broken file must not load"
    matching = [p for p in problems if message in p.message]
    assert matching, f"expected {message!r}, got {[str(p) for p in problems]}"
    assert matching[0].line == expected_line(text), str(matching[0])


def test_a_senior_tier_without_a_table_reports_only_the_table(tmp_path):
    path = write(tmp_path, "no-table.yaml", _drop_table(good_text()))
    _, problems = check_file(path)
    assert [p.message for p in problems] == [
        "tiers.senior: no Markdown table (the senior tier needs at least one)"
    ]


def test_the_same_slug_in_two_files_refuses_the_second(tmp_path):
    write(tmp_path, "01-first.yaml", good_text())
    second = replace_once(good_text(), "order: 1\n", "order: 7\n")
    write(tmp_path, "02-second.yaml", second)

    checked = check_files(sorted(tmp_path.glob("*.yaml")))

    assert [q.order for q in checked.questions] == [1]
    [problem] = checked.problems
    assert problem.path.endswith("02-second.yaml")
    assert problem.line == 1
    assert "duplicate slug 'fixture-countdown'" in problem.message
    assert "01-first.yaml" in problem.message


def test_the_same_order_in_two_files_is_a_problem(tmp_path):
    write(tmp_path, "01-first.yaml", good_text())
    write(
        tmp_path,
        "02-second.yaml",
        replace_once(good_text(), "slug: fixture-countdown", "slug: other"),
    )
    checked = check_files(sorted(tmp_path.glob("*.yaml")))
    [problem] = checked.problems
    assert problem.message.startswith("order: duplicate order 1")
    assert problem.line == 2


def test_command_prints_path_line_message_and_exits_1(tmp_path):
    text = replace_once(good_text(), "language: python", "language: rust")
    path = write(tmp_path, "broken.yaml", text)
    out = StringIO()

    with pytest.raises(SystemExit) as exit_info:
        call_command("validatelessons", str(path), stdout=out)

    assert exit_info.value.code == 1
    expected = f"{path}:{line_of(text, 'language: rust')}: code_samples[0].language: unknown code language 'rust'"
    assert expected in out.getvalue()


def test_command_passes_sound_files(tmp_path):
    out = StringIO()
    call_command("validatelessons", *map(str, sorted(FIXTURES.glob("*.yaml"))), stdout=out)
    assert "2 lesson file(s), no problems" in out.getvalue()


def test_command_line_exit_codes_from_a_real_process(tmp_path):
    broken = write(
        tmp_path, "broken.yaml", replace_once(good_text(), "level: middle", "level: guru")
    )

    bad = manage("validatelessons", str(broken), check=False)
    good = manage("validatelessons", str(FIXTURES / "01-fixture-countdown.yaml"), check=False)

    assert bad.returncode == 1
    assert f"{broken}:7: level: unknown level 'guru'" in bad.stdout
    assert good.returncode == 0, good.stdout + good.stderr


def test_json_summarises_every_question(settings):
    settings.LESSONS_DIR = FIXTURES
    out = StringIO()
    call_command("validatelessons", "--json", stdout=out)
    rows = json.loads(out.getvalue())

    assert [r["slug"] for r in rows] == ["fixture-countdown", "fixture-acks-late"]
    first = rows[0]
    assert first["title"] == "Where does a countdown task wait?"
    assert first["words"] == {"basics": 40, "solid": 83, "senior": 589}
    assert (first["claims_cost"], first["claims_hold"]) == (5, 3)
    assert (first["followups"], first["code_samples"]) == (2, 2)
    assert first["ok"] is True and first["problems"] == []


def test_json_still_counts_a_broken_file_and_exits_1(tmp_path):
    text = replace_once(
        good_text(), BASICS_LAST_LINE, BASICS_LAST_LINE + "    " + "more " * 25 + "\n"
    )
    path = write(tmp_path, "long-basics.yaml", text)
    out, err = StringIO(), StringIO()

    with pytest.raises(SystemExit):
        call_command("validatelessons", str(path), "--json", stdout=out, stderr=err)

    [row] = json.loads(out.getvalue())
    assert row["words"]["basics"] == 65
    assert row["ok"] is False
    assert "over the limit of 60" in row["problems"][0]
    assert "over the limit of 60" in err.getvalue()


def test_synclessons_fails_loudly_on_a_broken_file(tmp_path):
    write(tmp_path, "01-good.yaml", good_text())
    write(
        tmp_path,
        "02-bad.yaml",
        replace_once(good_text(), "slug: fixture-countdown", "slug: x\nnope: 1"),
    )

    result = manage("synclessons", check=False, TEACHLAB_LESSONS_DIR=str(tmp_path))

    assert result.returncode == 1
    assert "02-bad.yaml:2: lesson: unknown field 'nope'" in result.stderr


def test_a_byte_that_is_not_utf8_is_reported_on_its_line(tmp_path):
    text = replace_once(good_text(), "frequency: often", "frequency: often \udcff")
    path = tmp_path / "01-bad-bytes.yaml"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))

    _, problems = check_file(path)

    assert [(p.line, "not valid UTF-8" in p.message) for p in problems] == [
        (line_of(good_text(), "frequency: often"), True)
    ]

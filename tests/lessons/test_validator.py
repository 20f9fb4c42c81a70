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
    "    evidence: [{experiment: countdown-beyond-timeout, checks: [receipts]}]\n"
)
LAST_HOLD_CLAIM = (
    "  - id: due-table\n"
    "    claim: A due-time table is a sound home for long delays.\n"
    "    why: It is queryable, cancellable and survives restarts.\n"
    "    tier: senior\n"
    "    evidence: [{experiment: countdown-beyond-timeout, checks: [receipts]}]\n"
)
KP_EVIDENCE = "evidence: [{experiment: countdown-beyond-timeout, checks: [receipts]}]"
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
            "  - point: Redis puts it back in the queue once the visibility timeout passes.\n"
            f"    {KP_EVIDENCE}\n"
            "  - point: Long countdowns therefore invite duplicate deliveries.\n"
            f"    {KP_EVIDENCE}\n",
            "",
        ),
        "key_points: expected 4 to 6 items, found 2",
        lambda t: line_of(t, "key_points:"),
    ),
    (
        "too-many-key-points",
        lambda t: replace_once(
            t,
            "key_points:\n",
            "key_points:\n" + "".join(f"  - point: {n}\n    {KP_EVIDENCE}\n" for n in "abc"),
        ),
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
        f"duplicate claim id 'waits-in-redis' (first on line {line_of(good_text(), '- id: waits-in-redis')})",
        lambda t: line_of(t, "- id: waits-in-redis", start=line_of(t, "- id: waits-in-redis") + 1),
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
        "YAML syntax error: mapping values are not allowed",  # libyaml: "in this context"
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


# --- evidence (issue 9) ------------------------------------------------------------------

FIRST_CLAIM_EVIDENCE = (
    "    truth: Redis only keeps an unacked copy that it may restore.\n"
    "    tier: basics\n"
    "    evidence: [{experiment: countdown-beyond-timeout, checks: [receipts]}]\n"
)


def _first_claim_evidence(text: str, evidence: str, extra: str = "") -> str:
    return replace_once(
        text,
        FIRST_CLAIM_EVIDENCE,
        FIRST_CLAIM_EVIDENCE.replace(
            "[{experiment: countdown-beyond-timeout, checks: [receipts]}]", evidence
        )
        + extra,
    )


EVIDENCE_CASES = [
    (
        "claim-without-evidence",
        lambda t: replace_once(
            t, FIRST_CLAIM_EVIDENCE, FIRST_CLAIM_EVIDENCE.rsplit("    evidence", 1)[0]
        ),
        "claims_cost[0]: missing field 'evidence'",
        lambda t: line_of(t, "- id: waits-in-redis"),
    ),
    (
        "claim-with-empty-evidence",
        lambda t: _first_claim_evidence(t, "[]"),
        "claims_cost[0].evidence: no evidence",
        lambda t: line_of(t, "evidence: []"),
    ),
    (
        "key-point-without-evidence",
        lambda t: replace_once(
            t,
            "  - point: Long countdowns therefore invite duplicate deliveries.\n"
            f"    {KP_EVIDENCE}\n",
            "  - point: Long countdowns therefore invite duplicate deliveries.\n",
        ),
        "key_points[3]: missing field 'evidence'",
        lambda t: line_of(t, "  - point: Long countdowns"),
    ),
    (
        "experiment-that-does-not-exist",
        lambda t: _first_claim_evidence(t, "[{experiment: no-such-experiment}]"),
        "claims_cost[0].evidence[0].experiment: no experiment with slug 'no-such-experiment'",
        lambda t: line_of(t, "no-such-experiment"),
    ),
    (
        "lesson-experiment-that-does-not-exist",
        lambda t: replace_once(t, "  - countdown-beyond-timeout\n", "  - gone-experiment\n"),
        "experiments: no experiment with slug 'gone-experiment'",
        lambda t: line_of(t, "experiments:"),
    ),
    (
        "two-kinds-in-one-item",
        lambda t: _first_claim_evidence(t, "[{experiment: countdown-beyond-timeout, measured: 1}]"),
        "claims_cost[0].evidence[0]: give exactly one of: experiment, measured, seed, source, docs",
        lambda t: line_of(t, "measured: 1}]"),
    ),
    (
        "unknown-evidence-kind",
        lambda t: _first_claim_evidence(t, "[{hunch: yes}]"),
        "claims_cost[0].evidence[0]: unknown field 'hunch'",
        lambda t: line_of(t, "hunch"),
    ),
    (
        "source-without-versions",
        lambda t: _first_claim_evidence(
            t,
            "[{source: {package: kombu, module: kombu.transport.redis, function: QoS.append, shows: x}}]",
        ),
        "claims_cost[0].evidence[0].source: missing field 'versions'",
        lambda t: line_of(t, "QoS.append"),
    ),
    (
        "source-with-a-bad-range",
        lambda t: _first_claim_evidence(
            t,
            "[{source: {package: kombu, versions: recent, module: kombu.transport.redis, function: QoS.append, shows: x}}]",
        ),
        "claims_cost[0].evidence[0].source.versions: 'recent' is not a version range",
        lambda t: line_of(t, "versions: recent"),
    ),
    (
        "docs-without-version",
        lambda t: _first_claim_evidence(
            t, "[{docs: {title: Consumers, quote: q, read: 2026-12-05}}]"
        ),
        "claims_cost[0].evidence[0].docs: missing field 'version'",
        lambda t: line_of(t, "title: Consumers"),
    ),
    (
        "seed-that-does-not-exist",
        lambda t: _first_claim_evidence(t, "[{seed: 999_missing.txt}]"),
        "claims_cost[0].evidence[0].seed: no seed file '999_missing.txt'",
        lambda t: line_of(t, "999_missing"),
    ),
    (
        "measurement-note-that-does-not-exist",
        lambda t: _first_claim_evidence(t, "[{measured: 99}]"),
        "claims_cost[0].evidence[0].measured: lessons/measurements.md has no item 99",
        lambda t: line_of(t, "measured: 99"),
    ),
    (
        "seed-without-a-case-study",
        lambda t: _first_claim_evidence(t, "[{seed: 001_real.txt}]"),
        "claims_cost[0].evidence[0].seed: seed '001_real.txt' has no case study in "
        "lessons/seed_cases.yaml",
        lambda t: line_of(t, "001_real.txt"),
    ),
    (
        "version-named-without-versions",
        lambda t: replace_once(
            t,
            "    claim: A countdown message waits in Redis until it is due.\n",
            "    claim: On RabbitMQ 4.0 a countdown message waits in Redis until it is due.\n",
        ),
        "claims_cost[0]: names RabbitMQ 4.0 but does not say which versions it holds for",
        lambda t: line_of(t, "- id: waits-in-redis"),
    ),
    (
        "versions-for-an-unknown-product",
        lambda t: _first_claim_evidence(
            t,
            "[{experiment: countdown-beyond-timeout, checks: [receipts]}]",
            "    versions: {rabbitmqq: '>=4.0'}\n",
        ),
        "claims_cost[0].versions: unknown product 'rabbitmqq'",
        lambda t: line_of(t, "rabbitmqq"),
    ),
    (
        "missing-checked-against",
        lambda t: replace_once(t, "checked_against: {celery: 5.7.0, kombu: 5.7.0}\n", ""),
        "lesson: missing field 'checked_against'",
        lambda t: 1,
    ),
]


@pytest.mark.parametrize(
    ("mutate", "message", "expected_line"),
    [pytest.param(m, msg, line, id=case) for case, m, msg, line in EVIDENCE_CASES],
)
def test_each_evidence_refusal_is_reported_on_its_line(
    tmp_path, settings, mutate, message, expected_line
):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "001_real.txt").write_text("a seed")
    settings.SEEDS_DIR = seeds
    text = mutate(good_text())
    path = write(tmp_path, "broken.yaml", text)

    question, problems = check_file(path)

    assert question is None, "a file with unbacked claims must not load"
    matching = [p for p in problems if message in p.message]
    assert matching, f"expected {message!r}, got {[str(p) for p in problems]}"
    assert matching[0].line == expected_line(text), str(matching[0])


def test_a_version_named_with_its_versions_is_accepted(tmp_path):
    text = replace_once(
        good_text(),
        "    claim: A countdown message waits in Redis until it is due.\n",
        "    claim: On RabbitMQ 4.0 a countdown message waits in Redis until it is due.\n",
    )
    text = _first_claim_evidence(
        text,
        "[{experiment: countdown-beyond-timeout, checks: [receipts]}]",
        "    versions: {rabbitmq: '>=4.0'}\n",
    )
    question, problems = check_file(write(tmp_path, "ok.yaml", text))
    assert problems == []
    assert question.claims_cost[0].versions == (("rabbitmq", ">=4.0"),)


def test_evidence_lists_every_claim_and_key_point_with_its_evidence(settings):
    settings.LESSONS_DIR = FIXTURES
    out = StringIO()
    call_command("validatelessons", "--evidence", "--json", stdout=out)
    rows = json.loads(out.getvalue())

    first = [r for r in rows if r["lesson"] == "fixture-countdown"]
    kinds = {r["kind"] for r in first}
    assert kinds == {"key_point", "claim_cost", "claim_hold"}
    assert len(first) == 4 + 5 + 3
    waits = next(r for r in first if r["id"] == "waits-in-redis")
    assert waits["evidence"] == [
        {
            "kind": "experiment",
            "label": "lab experiment countdown-beyond-timeout",
            "url": "/lab/experiments/countdown-beyond-timeout/",
            "checks": ["receipts"],
        }
    ]
    assert waits["measured_on"] == {"redis": "7.0.15", "celery": "5.7.0", "kombu": "5.7.0"}
    assert all(r["evidence"] for r in rows)


def test_evidence_text_output_and_refusal_of_an_unbacked_claim(tmp_path):
    out = StringIO()
    call_command(
        "validatelessons", "--evidence", str(FIXTURES / "01-fixture-countdown.yaml"), stdout=out
    )
    assert "fixture-countdown:waits-in-redis" in out.getvalue()
    assert "lab experiment countdown-beyond-timeout" in out.getvalue()

    text = replace_once(
        good_text(), FIRST_CLAIM_EVIDENCE, FIRST_CLAIM_EVIDENCE.rsplit("    evidence", 1)[0]
    )
    broken = write(tmp_path, "unbacked.yaml", text)
    with pytest.raises(SystemExit) as exit_info:
        call_command("validatelessons", "--evidence", str(broken), stdout=StringIO())
    assert exit_info.value.code == 1


def test_every_real_lesson_claim_is_backed():
    """The shipped content passes the evidence rules (the command CI and setup run)."""
    result = manage("validatelessons", "--evidence", check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_lone_surrogate_in_a_lesson_is_a_yaml_problem_not_a_crash():
    from lessons.yamlschema import document_parse

    doc, problems = document_parse("slug: a\ntitle: '\ud800'\n", shown="x.yaml")
    assert doc is None and problems and problems[0].message.startswith("YAML syntax error")

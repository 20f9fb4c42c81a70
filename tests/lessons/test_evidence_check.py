"""Evidence that CI checks again (issue 25): a `source` reference's `shows:` text must be in the
installed function, an `experiment` reference names checks that exist, a `docs` reference
carries a short verbatim quote and the date it was read, and an experiment cannot back a claim
about versions the lab does not run."""

from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command

from lessons.evidence_check import function_source, source_problem
from lessons.loader import check_files
from tests.lessons.lessonfiles import GOOD, good_text, line_of, replace_once, write

CONTENT = Path(django_settings.BASE_DIR) / "lessons" / "content"
LESSON_09 = "09-redis-broker-in-production.yaml"


def _copy_lessons(tmp_path: Path) -> Path:
    target = tmp_path / "content"
    shutil.copytree(CONTENT, target)
    return target


def _validate(settings, directory: Path) -> tuple[int, str]:
    settings.LESSONS_DIR = directory
    out = StringIO()
    try:
        call_command("validatelessons", stdout=out, stderr=out)
    except SystemExit as exit:
        return int(exit.code), out.getvalue()
    return 0, out.getvalue()


def test_a_shows_line_that_is_not_in_the_function_fails_and_names_the_claim(tmp_path, settings):
    directory = _copy_lessons(tmp_path)
    path = directory / LESSON_09
    text = replace_once(
        path.read_text(encoding="utf-8"),
        "function: Channel._lookup, shows: ['if not exchange:', 'return [routing_key or default]']",
        "function: Channel._lookup, shows: ['if not exchange:', 'return [binding_set_lookup]']",
    )
    path.write_text(text, encoding="utf-8")

    code, out = _validate(settings, directory)

    assert code == 1
    line = line_of(text, "return [binding_set_lookup]")
    assert (
        f"{LESSON_09}:{line}: redis-broker-in-production claim lru-safe-for-broker: "
        "kombu.transport.virtual.base Channel._lookup no longer shows 'return [binding_set_lookup]'"
    ) in out


def test_a_function_that_is_gone_from_the_package_fails_and_names_the_claim(tmp_path, settings):
    directory = _copy_lessons(tmp_path)
    path = directory / LESSON_09
    text = path.read_text(encoding="utf-8").replace(
        "function: get_redis_error_classes,", "function: get_redis_error_kinds,", 1
    )
    path.write_text(text, encoding="utf-8")

    code, out = _validate(settings, directory)

    assert code == 1
    assert "key point 2: kombu.transport.redis has no get_redis_error_kinds" in out


def test_every_real_lesson_source_reference_still_shows_its_text():
    checked = check_files(sorted(CONTENT.glob("*.yaml")), sources=True)
    assert [str(p) for p in checked.problems] == []


def test_source_is_read_from_the_installed_file_for_nested_defs_attributes_and_optional_deps():
    nested = function_source("celery.worker.strategy", "default.task_message_handler")
    assert nested is not None and "consumer.qos.increment_eventually()" in nested
    attribute = function_source("kombu.transport.redis", "Channel.visibility_timeout")
    assert attribute is not None and "3600" in attribute
    # kombu's SQS transport imports botocore, which is not installed: reading needs no import.
    assert (
        source_problem(
            module="kombu.transport.SQS",
            function="Channel.visibility_timeout",
            shows=("timeout = self.default_visibility_timeout",),
        )
        is None
    )
    assert "is not installed" in source_problem(
        module="no_such_pkg.mod", function="f", shows=("x",)
    )


def test_whitespace_and_line_breaks_do_not_matter_in_shows():
    assert (
        source_problem(
            module="celery.worker.request",
            function="Request.on_accepted",
            shows=("if not self.task.acks_late:\n        self.acknowledge()",),
        )
        is None
    )


CLAIM_EVIDENCE = "    evidence: [{experiment: countdown-beyond-timeout, checks: [receipts]}]\n"


def _first_claim_with(text: str, evidence: str, extra: str = "") -> str:
    start = text.index("claims_cost:")
    head, tail = text[:start], text[start:]
    return head + tail.replace(CLAIM_EVIDENCE, evidence + extra, 1)


@pytest.mark.parametrize(
    ("evidence", "message"),
    [
        (
            "    evidence: [{experiment: countdown-beyond-timeout}]\n",
            "experiment countdown-beyond-timeout: name the checks that show it",
        ),
        (
            "    evidence: [{experiment: countdown-beyond-timeout, checks: [no_such_check]}]\n",
            "experiment countdown-beyond-timeout has no check 'no_such_check'",
        ),
        (
            # a seed with a case study (lessons/seed_cases.yaml), so only `checks` is wrong
            "    evidence: [{seed: 000_c89bb4ffd467a515.txt, checks: [receipts]}]\n",
            "`checks` belongs to an `experiment` reference",
        ),
        (
            "    evidence: [{seed: 000_c89bb4ffd467a515.txt}]\n",
            "give the `passage` of 000_c89bb4ffd467a515.txt that backs this",
        ),
        (
            "    evidence: [{seed: 000_c89bb4ffd467a515.txt, passage: 'no such words'}]\n",
            "'no such words' is not in 000_c89bb4ffd467a515.txt: quote it word for word",
        ),
        (
            "    evidence: [{seed: 000_c89bb4ffd467a515.txt, passage: '"
            + " ".join(["facts"] * 10)
            + "'}]\n",
            "10 words; quote at most 9",
        ),
        (
            "    evidence: [{measured: 1, passage: facts}]\n",
            "`passage` belongs to a `seed` reference",
        ),
        (
            "    evidence: [{docs: {title: T, version: Redis 7.0, quote: '"
            + " ".join(["word"] * 31)
            + "', read: 2026-12-05}}]\n",
            "31 words; quote at most 30",
        ),
        (
            "    evidence: [{docs: {title: T, version: Redis 7.0, quote: short}}]\n",
            "missing field 'read'",
        ),
        (
            "    evidence: [{source: {package: kombu, versions: '>=5.7,<5.8', "
            "module: kombu.transport.redis, function: QoS.append}}]\n",
            "missing field 'shows'",
        ),
    ],
    ids=[
        "no-checks",
        "unknown-check",
        "checks-on-a-seed",
        "seed-without-passage",
        "passage-not-in-the-seed",
        "passage-of-ten-words",
        "passage-without-a-seed",
        "long-quote",
        "no-read-date",
        "no-shows",
    ],
)
def test_each_evidence_reference_without_what_shows_the_claim_is_refused(
    tmp_path, settings, evidence, message
):
    settings.SEEDS_DIR = tmp_path / "seeds"
    write(settings.SEEDS_DIR, "000_c89bb4ffd467a515.txt", " ".join(["facts"] * 12))
    text = _first_claim_with(good_text(), evidence)
    path = write(tmp_path / "lessons", GOOD.name, text)

    problems = [str(p) for p in check_files([path]).problems]

    assert any(message in p for p in problems), problems


def test_an_experiment_cannot_back_a_claim_about_versions_the_lab_does_not_run(tmp_path):
    text = _first_claim_with(good_text(), CLAIM_EVIDENCE, "    versions: {redis: '>=7.2'}\n")
    path = write(tmp_path / "lessons", GOOD.name, text)

    problems = [str(p) for p in check_files([path]).problems]

    assert any(
        "experiment countdown-beyond-timeout runs on Redis 7.0.15, which versions "
        "{redis: '>=7.2'} excludes" in p
        for p in problems
    ), problems


def test_evidence_json_lists_shows_checks_quotes_and_versions_per_claim(settings):
    settings.LESSONS_DIR = CONTENT
    out = StringIO()
    call_command("validatelessons", "--evidence", "--json", stdout=out)
    rows = {r["key"]: r for r in json.loads(out.getvalue())}

    lru = rows["redis-broker-in-production:lru-safe-for-broker"]
    docs = next(e for e in lru["evidence"] if e["kind"] == "docs")
    assert docs["quote"].startswith("volatile-lru -> Evict using approximated LRU")
    assert docs["read"] == "2026-12-05" and docs["version"] == "Redis 7.0.15"
    source = next(e for e in lru["evidence"] if e["kind"] == "source")
    assert source["shows"] == ["if not exchange:", "return [routing_key or default]"]
    assert lru["measured_on"] == {"redis": "7.0.15", "celery": "5.7.0", "kombu": "5.7.0"}
    assert "Redis 7.0.15" in lru["documented_for"]

    docs_only = rows["quorum-poison-messages:limit-hits-only-poison"]
    assert docs_only["measured_on"] == {}
    assert docs_only["documented_for"] == ["RabbitMQ 3.13 to 4.3"]

    limit = rows["quorum-poison-messages:explicit-limit-drops-after-returns"]
    experiment = next(e for e in limit["evidence"] if e["kind"] == "experiment")
    assert experiment["checks"] == ["receipts", "redelivered", "completions", "messages_left"]
    assert limit["measured_on"] == {"rabbitmq": "3.10.8", "celery": "5.7.0", "kombu": "5.7.0"}

"""The experiment files validate, and a broken file is reported with the right line."""

from __future__ import annotations

import textwrap

from teachlab.lab.experiments.catalog import (
    EXPERIMENTS_DIR,
    catalog_validate,
    experiment_validate,
    lesson_claims,
)

LESSONS = {"raise-visibility-timeout": {"copies-run-together-at-due-time", "sweep-adds-lag"}}
LANES = {"redis-short", "redis-long"}

GOOD = textwrap.dedent(
    """\
    slug: tiny
    order: 1
    title: Tiny
    question: Does it come back?
    backs:
      - lesson: raise-visibility-timeout
        claims: [copies-run-together-at-due-time]
    prediction:
      prompt: How many receipts?
      kind: number
      observe: {what: max_receipts}
    runs:
      - name: main
        lane: redis-short
        params: {countdown: 25}
        steps:
          - fire
          - wait: 30
    checks:
      - what: receipts
        per: task
        at_least: 3
        says: Received again.
    explanation: Because.
    """
)


def validate(text: str, file: str = "tiny.yaml"):
    return experiment_validate(file=file, text=text, lessons=LESSONS, lanes=LANES)


def lines_of(problems) -> list[int]:
    return [p.line for p in problems]


def test_a_well_formed_experiment_loads_with_its_single_run_filled_in():
    experiment, problems = validate(GOOD)
    assert problems == []
    assert experiment.checks[0]["run"] == "main"
    assert experiment.prediction["observe"]["run"] == "main"
    assert experiment.seconds == 30


def test_unknown_metric_is_reported_on_its_line():
    _, problems = validate(GOOD.replace("- what: receipts", "- what: receits"))
    assert lines_of(problems) == [20]
    assert "unknown task metric 'receits'" in problems[0].message
    assert "receipts" in problems[0].message  # lists what is known


def test_unknown_lane_and_claim_point_at_their_lines():
    text = GOOD.replace("lane: redis-short", "lane: redis-tiny").replace(
        "claims: [copies-run-together-at-due-time]", "claims: [no-such-claim]"
    )
    _, problems = validate(text)
    by_line = {p.line: p.message for p in problems}
    assert "no lane 'redis-tiny'" in by_line[14]
    assert "has no claim 'no-such-claim'" in by_line[7]


def test_a_step_before_fire_and_a_bad_step_are_refused():
    text = GOOD.replace(
        "      - fire\n      - wait: 30\n", "      - wait: 3\n      - explode: now\n"
    )
    _, problems = validate(text)
    messages = {p.line: p.message for p in problems}
    assert "fire the run before any other step" in messages[17]
    assert "unknown step 'explode'" in messages[18]
    assert any("never `fire`" in m for m in messages.values())


def test_a_check_with_two_bounds_or_none_is_refused():
    _, problems = validate(GOOD.replace("    at_least: 3\n", "    at_least: 3\n    at_most: 5\n"))
    assert "exactly one bound" in problems[0].message and problems[0].line == 20
    _, problems = validate(GOOD.replace("    at_least: 3\n", ""))
    assert "exactly one bound" in problems[0].message


def test_missing_and_unknown_fields_are_named():
    _, problems = validate(GOOD.replace("explanation: Because.\n", "explanaton: Because.\n"))
    messages = [str(p) for p in problems]
    assert "tiny.yaml:1: an experiment is missing `explanation`" in messages
    assert any(
        m.startswith("tiny.yaml:24:") and "unknown field `explanaton`" in m for m in messages
    )


def test_bad_yaml_and_duplicate_keys_give_their_line():
    _, problems = validate(GOOD.replace("order: 1", "order: [1"))
    assert problems[0].line in (2, 3) and "not valid YAML" in problems[0].message
    _, problems = validate(GOOD + "title: Again\n")
    assert any(p.line == 25 and "appears twice" in p.message for p in problems)


def test_slug_must_match_file_name():
    _, problems = validate(GOOD, file="other.yaml")
    assert problems[0].line == 1 and "must match the file name" in problems[0].message


def test_a_choice_prediction_needs_conditions_that_name_known_runs():
    text = GOOD.replace(
        "  kind: number\n  observe: {what: max_receipts}\n",
        "  kind: choice\n  choices:\n"
        "    - {id: once, label: Once, when: {what: max_receipts, equals: 1}}\n"
        "    - {id: more, label: More, when: {run: nope, what: max_receipts, more_than: 1}}\n",
    )
    _, problems = validate(text)
    assert [p.line for p in problems] == [13]
    assert "no run named 'nope'" in problems[0].message


def test_every_shipped_experiment_is_valid_against_the_real_lessons_and_lanes():
    experiments, problems = catalog_validate()
    assert [str(p) for p in problems] == []
    assert len(experiments) >= 12


def test_every_experiment_a_lesson_links_exists_and_backs_real_claims():
    experiments, _ = catalog_validate()
    slugs = {e.slug for e in experiments}
    claims = lesson_claims()
    import yaml

    from teachlab.lab.experiments.catalog import lessons_dir

    for path in lessons_dir().glob("*.yaml"):
        lesson = yaml.safe_load(path.read_text())
        for slug in lesson.get("experiments") or []:
            assert slug in slugs, f"{path.name} links missing experiment {slug}"
    for experiment in experiments:
        for back in experiment.backs:
            assert set(back["claims"]) <= claims[back["lesson"]]


def test_the_whole_set_fits_the_ci_budget():
    from teachlab.lab.experiments.batch import batch_seconds

    experiments, _ = catalog_validate()
    # `lab experiment --all` overlaps experiments on separate brokers: the longest chain on
    # one Redis database or RabbitMQ queue decides.
    assert batch_seconds(experiments=experiments) < 5.5 * 60


def test_the_schedule_overlaps_experiments_on_separate_brokers_only():
    from teachlab.lab.experiments.batch import batch_seconds

    by_slug = {e.slug: e for e in catalog_validate()[0]}
    short = [by_slug["countdown-beyond-timeout"], by_slug["countdown-within-timeout"]]
    assert batch_seconds(experiments=short) == sum(e.seconds for e in short)
    apart = [by_slug["countdown-beyond-timeout"], by_slug["raised-timeout"]]
    assert batch_seconds(experiments=apart) == max(e.seconds for e in apart)
    rabbit = [by_slug["quorum-native-delay"], by_slug["quorum-delivery-limit"]]
    assert batch_seconds(experiments=rabbit) == max(e.seconds for e in rabbit)


def test_validateexperiments_prints_each_problem_with_file_and_line(tmp_path):
    from tests.stack import manage

    (tmp_path / "tiny.yaml").write_text(GOOD.replace("per: task", "per: tasks"))
    done = manage("validateexperiments", "--dir", str(tmp_path), check=False)
    assert done.returncode == 1
    assert "tiny.yaml:21: `per` must be one of run, task, not 'tasks'" in done.stderr
    ok = manage("validateexperiments", check=False)
    shipped = len(list(EXPERIMENTS_DIR.glob("*.yaml")))
    assert ok.returncode == 0 and f"{shipped} experiments OK" in ok.stdout


def test_lab_experiment_lists_the_set_and_refuses_unknown_names():
    from tests.stack import manage

    listed = manage("lab", "experiment", "--list")
    lines = listed.stdout.strip().splitlines()
    shipped = len(list(EXPERIMENTS_DIR.glob("*.yaml")))
    assert len(lines) == shipped and "crash-vs-warm-shutdown" in listed.stdout
    unknown = manage("lab", "experiment", "no-such-experiment", check=False)
    assert unknown.returncode == 2
    assert "No experiment called no-such-experiment" in unknown.stdout
    assert "countdown-beyond-timeout" in unknown.stdout  # says what there is


def test_the_table_line_shows_pass_or_fail_and_the_failed_checks():
    import io

    from teachlab.lab.experiments.cli import _details, _line

    result = {
        "slug": "raised-timeout",
        "passed": False,
        "seconds": 31.2,
        "checks": [
            {"says": "One delivery.", "run": "main", "passed": False, "expected": "receipts = 1", "observed": "2"},
            {"says": "Ran once.", "run": "main", "passed": True, "expected": "x", "observed": "1"},
        ],
        "errors": [],
        "prediction": {},
    }  # fmt: skip
    assert _line(result).startswith("FAIL  raised-timeout") and "1/2 checks" in _line(result)
    out = io.StringIO()
    _details(result, out)
    assert "FAIL [main] One delivery." in out.getvalue()
    assert "expected receipts = 1; observed 2" in out.getvalue()


def test_pages_leave_a_broken_file_out_while_the_command_refuses_it(tmp_path):
    import pytest

    from teachlab.lab.experiments.catalog import CatalogError, experiments_load

    (tmp_path / "tiny.yaml").write_text(GOOD)
    (tmp_path / "broken.yaml").write_text(
        GOOD.replace("slug: tiny", "slug: broken").replace("order: 1", "order: x")
    )
    assert [e.slug for e in experiments_load(directory=tmp_path)] == ["tiny"]
    with pytest.raises(CatalogError, match="broken.yaml:2: `order` must be a whole number"):
        experiments_load(directory=tmp_path, strict=True)


def test_claims_resolve_through_the_configured_lessons_folder(tmp_path, settings):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "01-x.yaml").write_text("slug: made-up-lesson\nclaims_hold:\n  - id: its-claim\n")
    (tmp_path / "tiny.yaml").write_text(
        GOOD.replace("raise-visibility-timeout", "made-up-lesson").replace(
            "copies-run-together-at-due-time", "its-claim"
        )
    )
    settings.LESSONS_DIR = lessons
    experiments, problems = catalog_validate(directory=tmp_path)
    assert problems == [] and [e.slug for e in experiments] == ["tiny"]
    settings.LESSONS_DIR = tmp_path / "elsewhere"
    _, problems = catalog_validate(directory=tmp_path)
    assert any("no lesson with slug 'made-up-lesson'" in p.message for p in problems)


def test_an_until_may_wait_for_another_run_and_a_shutdown_may_have_a_grace_period():
    text = (
        GOOD.replace(
            "      - wait: 30\n",
            "      - shutdown: {worker: holder, grace: 3}\n"
            "      - until: {run: other, what: executions, at_least: 1, within: 20}\n"
            "  - name: other\n"
            "    lane: redis-long\n"
            "    params: {}\n"
            "    steps: [fire]\n",
        )
        .replace(
            "  - what: receipts\n    per: task", "  - run: main\n    what: receipts\n    per: task"
        )
        .replace("observe: {what: max_receipts}", "observe: {run: main, what: max_receipts}")
    )
    experiment, problems = validate(text)
    assert problems == []
    assert experiment.runs[0]["steps"][2]["until"]["run"] == "other"
    assert experiment.seconds == 23
    _, problems = validate(text.replace("run: other, what", "run: nobody, what"))
    assert any("no run named 'nobody'" in p.message for p in problems)
    _, problems = validate(text.replace("worker: holder, grace: 3", "worker: holder"))
    assert any("missing `grace`" in p.message for p in problems)


def test_a_timing_prediction_loads_with_its_run_filled_in_and_a_bad_one_is_reported():
    timing = GOOD.replace(
        "  observe: {what: max_receipts}\n",
        "  observe: {what: max_receipts}\n"
        "  timing:\n"
        "    prompt: When do they run?\n"
        "    choices:\n"
        "      - {id: together, label: Together, when: {what: max_running_at_once, at_least: 2}}\n"
        "      - {id: apart, label: Apart, when: {what: tasks, at_least: 0}}\n",
    )
    experiment, problems = validate(timing)
    assert problems == []
    assert experiment.prediction["timing"]["choices"][0]["when"]["run"] == "main"
    broken = timing.replace(
        "      - {id: apart, label: Apart, when: {what: tasks, at_least: 0}}\n", ""
    )
    _experiment, problems = validate(broken)
    choices_line = broken.splitlines().index("    choices:") + 1
    assert len(problems) == 1 and "choices" in problems[0].message
    assert problems[0].line in (choices_line, choices_line + 1)


def test_a_check_id_is_kept_and_two_alike_or_a_malformed_one_are_refused():
    with_id = GOOD.replace("  - what: receipts\n", "  - id: received-again\n    what: receipts\n")
    experiment, problems = validate(with_id)
    assert not problems and experiment.checks[0]["id"] == "received-again"
    one = "  - id: received-again\n    what: receipts\n    at_least: 1\n    says: Once.\n"
    twice = with_id.replace("explanation: Because.\n", one + "explanation: Because.\n")
    _, problems = validate(twice)
    assert any("two checks have the id 'received-again'" in p.message for p in problems)
    _, problems = validate(with_id.replace("id: received-again", "id: Received Again"))
    assert any("lowercase letters, digits and dashes" in p.message for p in problems)


def test_a_disconnect_step_targets_a_worker_like_a_crash():
    good, problems = validate(GOOD.replace("      - wait: 30\n", "      - disconnect: holder\n"))
    assert not problems and {"disconnect": "holder"} in good.runs[0]["steps"]
    _, problems = validate(GOOD.replace("      - wait: 30\n", "      - disconnect: everyone\n"))
    assert "`disconnect` targets one of holder, any" in problems[0].message


def test_an_evict_step_takes_only_bindings():
    good, problems = validate(GOOD.replace("      - wait: 30\n", "      - evict: bindings\n"))
    assert not problems and {"evict": "bindings"} in good.runs[0]["steps"]
    _, problems = validate(GOOD.replace("      - wait: 30\n", "      - evict: unacked\n"))
    assert "`evict` takes `bindings`" in problems[0].message


STALL = "      - pause: any\n      - wait: 2\n      - fire\n      - fill: memory\n      - resume: paused\n      - free: memory\n"


def test_a_worker_may_be_paused_before_fire_and_memory_filled_and_freed_after_it():
    good, problems = validate(GOOD.replace("      - fire\n      - wait: 30\n", STALL))
    assert not problems, problems
    assert good.runs[0]["steps"][:3] == [{"pause": "any"}, {"wait": 2}, "fire"]


def test_a_run_that_fills_or_pauses_must_free_or_resume_after_it():
    _, problems = validate(
        GOOD.replace(
            "      - fire\n      - wait: 30\n", STALL.replace("      - free: memory\n", "")
        )
    )
    assert ["a run that fills the broker's memory must `free: memory` after it"] == [
        p.message for p in problems
    ]
    _, problems = validate(
        GOOD.replace(
            "      - fire\n      - wait: 30\n", STALL.replace("      - resume: paused\n", "")
        )
    )
    assert ["a run that pauses a worker must `resume: paused` after it"] == [
        p.message for p in problems
    ]


def test_the_memory_and_pause_steps_take_only_their_words():
    for step, words in (
        ("fill: disk", "`fill` takes `memory`"),
        ("free: all", "`free` takes `memory`"),
        ("resume: any", "`resume` takes `paused`"),
        ("pause: everyone", "`pause` targets one of holder, any"),
    ):
        _, problems = validate(GOOD.replace("      - wait: 30\n", f"      - {step}\n"))
        assert any(words in p.message for p in problems), (step, problems)


NEEDS = 'needs:\n  kombu: ">=5.7"\n  why: the 1 s sweep is a kombu 5.7 option\n'


def test_needs_loads_its_ranges_and_why():
    experiment, problems = validate(GOOD.replace("question:", NEEDS + "question:"))
    assert problems == []
    assert experiment.needs == {"kombu": ">=5.7", "why": "the 1 s sweep is a kombu 5.7 option"}
    assert validate(GOOD)[0].needs == {}


def test_a_bad_needs_range_a_missing_why_and_an_unknown_package_point_at_their_lines():
    bad_range = NEEDS.replace('">=5.7"', '"five point seven"')
    _, problems = validate(GOOD.replace("question:", bad_range + "question:"))
    assert lines_of(problems) == [5]
    assert "`needs.kombu` must be a version range like" in problems[0].message
    no_why = 'needs:\n  celery: ">=5.5"\n'
    _, problems = validate(GOOD.replace("question:", no_why + "question:"))
    assert lines_of(problems) == [4]
    assert "`needs` is missing `why`" in problems[0].message
    other = 'needs:\n  redis: ">=6.2"\n  why: ZRANGE BYSCORE\n'
    _, problems = validate(GOOD.replace("question:", other + "question:"))
    assert lines_of(problems) == [5, 4]
    assert "unknown field `redis`" in problems[0].message
    assert "names none of celery, kombu" in problems[1].message
    _, problems = validate(GOOD.replace("question:", "needs: kombu 5.7\nquestion:"))
    assert lines_of(problems) == [4]
    assert "`needs` must be a mapping" in problems[0].message


ON_REDIS = '    on_redis: "<6.2"\n'


def test_a_check_may_be_limited_to_a_redis_or_kombu_range_and_a_bad_range_is_refused():
    limited = GOOD.replace("  - what: receipts\n", "  - what: receipts\n" + ON_REDIS)
    experiment, problems = validate(limited)
    assert problems == []
    assert experiment.checks[0]["on_redis"] == "<6.2"
    bad = limited.replace('"<6.2"', "six point two").replace("on_redis", "on_kombu")
    _, problems = validate(bad)
    assert len(problems) == 1 and "`on_kombu` must be a version range like" in problems[0].message


def test_workers_may_exit_takes_a_reason():
    experiment, problems = validate(
        GOOD.replace("question:", "workers_may_exit: they exit at start\nquestion:")
    )
    assert problems == [] and experiment.workers_may_exit == "they exit at start"
    assert validate(GOOD)[0].workers_may_exit == ""
    _, problems = validate(GOOD.replace("question:", "workers_may_exit: ''\nquestion:"))
    assert (
        lines_of(problems) == [4] and "`workers_may_exit` must be non-empty" in problems[0].message
    )


def test_a_tag_no_safe_loader_knows_is_a_problem_on_its_line_not_a_crash():
    _, problems = validate(GOOD.replace("order: 1", "order: !python/object:os.system 1"))
    assert problems and "not valid YAML" in problems[0].message
    assert problems[0].line == GOOD.splitlines().index("order: 1") + 1


def test_a_lone_surrogate_is_a_problem_not_a_crash():
    """libyaml fails on a lone surrogate with UnicodeEncodeError; the file gets a message."""
    _, problems = validate(GOOD.replace("order: 1", "order: '\ud800'"))
    assert problems and "not valid YAML" in problems[0].message

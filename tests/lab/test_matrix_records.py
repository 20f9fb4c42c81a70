"""lessons/verified/: a record is refused once its experiment file changes, the command's
store keeps one record per combination, and each lock file pins the pair it is named for."""

from __future__ import annotations

import json
import re
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from teachlab.lab.matrix import records
from teachlab.lab.matrix.envs import celery_series, lock_pins
from teachlab.lab.matrix.locks import lock_input

SLUG = "countdown-beyond-timeout"
REPO = Path(__file__).resolve().parents[2]


def _record(celery: str, redis: str, digest: str) -> dict:
    return {
        "experiment": SLUG,
        "combination": {"celery": celery, "redis": redis},
        "verdict": "holds",
        "digest": digest,
    }


@pytest.fixture
def repo_copy(settings, tmp_path):
    """BASE_DIR with one experiment file of its own, so a test may edit it."""
    (tmp_path / "lessons" / "experiments").mkdir(parents=True)
    shutil.copy(
        REPO / "lessons" / "experiments" / f"{SLUG}.yaml", tmp_path / "lessons" / "experiments"
    )
    settings.BASE_DIR = tmp_path
    settings.LAB_VERIFIED_DIR = ""
    return tmp_path


def test_an_edited_experiment_file_makes_its_records_refused(repo_copy):
    records.records_store(SLUG, [_record("5.7", "7.0", records.experiment_digest(SLUG))])
    assert records.verified_problems() == []
    path = repo_copy / "lessons" / "experiments" / f"{SLUG}.yaml"
    path.write_text(path.read_text() + "# edited\n")
    problems = records.verified_problems()
    assert len(problems) == 1
    assert "Celery 5.7 × Redis 7.0" in problems[0]
    assert f"re-run `lab matrix --experiment {SLUG}`" in problems[0]


def test_storing_replaces_the_same_combination_and_drops_stale_records(repo_copy):
    digest = records.experiment_digest(SLUG)
    records.records_store(SLUG, [_record("5.5", "6.0", digest), _record("5.7", "7.0", "0" * 64)])
    again = {**_record("5.5", "6.0", digest), "verdict": "fails"}
    records.records_store(SLUG, [again, _record("5.7", "6.2", digest)])
    stored = records.records_read(SLUG)
    assert [(r["combination"]["celery"], r["combination"]["redis"]) for r in stored] == [
        ("5.5", "6.0"),
        ("5.7", "6.2"),
    ]
    assert stored[0]["verdict"] == "fails"


@pytest.mark.slow  # the whole content is validated: about 25 s
def test_validatelessons_refuses_a_record_of_another_experiment_version(settings, tmp_path):
    settings.LAB_VERIFIED_DIR = str(tmp_path)
    body = {"experiment": SLUG, "records": [_record("5.5", "6.0", "0" * 64)]}
    (tmp_path / f"{SLUG}.json").write_text(json.dumps(body))
    out = StringIO()
    with pytest.raises(SystemExit):
        call_command("validatelessons", stdout=out)
    assert f"re-run `lab matrix --experiment {SLUG}`" in out.getvalue()


def test_each_lock_file_pins_the_celery_and_kombu_series_it_is_named_for():
    assert {"5.5", "5.7"} <= set(celery_series())
    project = dict(
        line.split("==")
        for line in (REPO / "requirements.txt").read_text().splitlines()
        if line.startswith(("Django==", "celery==", "kombu=="))
    )
    for series in celery_series():
        pins = lock_pins(series)
        assert pins["celery"].startswith(series + ".")
        assert pins["kombu"].startswith(series + ".")
        assert pins["django"] == project["Django"]  # the worker imports the project
    assert lock_pins("5.7")["celery"] == project["celery"]


def test_every_lock_pins_the_project_requirements_it_keeps_at_their_versions():
    """requirements.txt changed and a lock did not: the matrix's workers would miss a module
    the project imports. Fix: `python -m teachlab.lab.matrix.locks`."""
    for series in celery_series():
        pins = lock_pins(series)
        for line in lock_input(series):
            name, _, version = line.split(";")[0].partition("==")
            name = re.sub(r"[-_.]+", "-", name.split("[")[0].strip().lower())
            assert pins.get(name) == version.strip(), (series, name, pins.get(name), version)


def test_a_second_matrix_run_is_refused_while_one_holds_var_matrix(settings, tmp_path):
    from teachlab.lab.matrix.envs import EnvFailed
    from teachlab.lab.matrix.runner import one_matrix_at_a_time

    settings.BASE_DIR = tmp_path
    with one_matrix_at_a_time():
        with pytest.raises(EnvFailed, match="another `lab matrix` is running"):
            with one_matrix_at_a_time():
                pass
    with one_matrix_at_a_time():  # free again once the first is done
        pass


def test_the_short_table_groups_combinations_by_outcome_and_keeps_the_workers_words(repo_copy):
    digest = records.experiment_digest(SLUG)
    error = "redis.exceptions.ResponseError: value is not an integer or out of range"
    failed = {
        **_record("5.7", "6.0", digest),
        "verdict": "workers fail",
        "reason": f"redis-short-1 exited 4 times: Unrecoverable error: server:ResponseError; {error}",
    }
    expected = {
        **_record("5.7", "6.2", digest),
        "reason": f"workers exit at start: redis-versions-1 exited 4 times: x; {error}",
    }
    records.records_store(
        SLUG, [failed, expected, _record("5.5", "7.0", digest), _record("5.7", "7.0", digest)]
    )
    assert records.verified_summary(SLUG) == [
        {"releases": "Celery 5.5, 5.7 × Redis 7.0", "verdict": "holds", "reason": ""},
        {"releases": "Celery 5.7 × Redis 6.2", "verdict": "holds",
         "reason": f"workers exit at start: {error}"},
        {"releases": "Celery 5.7 × Redis 6.0", "verdict": "workers fail", "reason": error},
    ]  # fmt: skip

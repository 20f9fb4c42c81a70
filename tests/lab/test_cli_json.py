"""`manage.py lab … --json`: every subcommand that prints a list or a result can print it as JSON
instead, so scripts read the output with json.loads. The runs that need workers (`run`,
`fidelity`) are pinned in test_cli.py; these need no worker."""

from __future__ import annotations

import io
import json
import time

import pytest
from django.core.management import call_command

from lessons.models import Learner
from teachlab.lab.experiments.catalog import EXPERIMENTS_DIR
from teachlab.lab.experiments.models import new_attempt_id
from teachlab.lab.management.commands.lab import Command
from teachlab.lab.models import Run, new_run_id
from tests.stack import manage

# Loops that print nothing but their own log lines: no list, no result.
LOOPS = {"monitor", "record"}


def _subcommands() -> dict:
    parser = Command().create_parser("manage.py", "lab")
    action = next(a for a in parser._actions if a.dest == "action")
    return action.choices


def test_every_lab_subcommand_that_prints_a_result_accepts_json():
    subcommands = _subcommands()
    assert set(subcommands) >= {"run", "workers", "tail", "fidelity", "experiment", *LOOPS}
    for name, sub in subcommands.items():
        if name in LOOPS:
            continue
        options = {opt for action in sub._actions for opt in action.option_strings}
        assert "--json" in options, f"`lab {name}` has no --json"


def test_lab_experiment_list_json_gives_one_object_per_experiment():
    listed = json.loads(manage("lab", "experiment", "--list", "--json").stdout)
    shipped = len(list(EXPERIMENTS_DIR.glob("*.yaml")))
    assert len(listed) == shipped
    first = listed[0]
    assert set(first) == {"order", "slug", "title", "seconds", "lanes"}
    assert [row["order"] for row in listed] == sorted(row["order"] for row in listed)
    assert "crash-vs-warm-shutdown" in {row["slug"] for row in listed}


def test_lab_experiment_json_refuses_an_unknown_name_with_a_json_error():
    done = manage("lab", "experiment", "no-such-experiment", "--json", check=False)
    assert done.returncode == 2
    answer = json.loads(done.stdout)
    assert "No experiment called no-such-experiment" in answer["error"]
    assert "countdown-beyond-timeout" in answer["choices"]


def test_lab_workers_json_parses_with_no_workers_running():
    report = json.loads(
        manage(
            "lab", "workers", "--json", TEACHLAB_RABBIT_URL="amqp://guest:guest@127.0.0.1:1//"
        ).stdout
    )
    by_lane = {lane["lane"]: lane for lane in report}
    assert not by_lane["rabbit-quorum"]["available"]
    assert "redis-short" in by_lane


@pytest.mark.django_db(transaction=True)
def test_lab_tail_json_prints_the_runs_events_and_whether_it_settled():
    from teachlab.lab.eventlog.stream import done_append, entry_append, log_open

    run = Run.objects.create(
        learner=Learner.objects.create(),
        lane="redis-short",
        task_ids=["tail-task"],
        visibility_timeout=10,
        fired_at=time.time(),
    )
    log_open(run.id)
    fields = {"k": "received", "ti": "tail-task", "i": "0", "w": "w1@test", "r": "0",
              "a": repr(time.time()), "n_tasks": "1"}  # fmt: skip
    entry_append(run_id=run.id, kind="received", task_id="tail-task", known_copy=0, fields=fields)
    done_append(run_id=run.id, summary={"status": "done"})

    out = io.StringIO()
    call_command("lab", "tail", str(run.id), "--json", "--timeout", "10", stdout=out)
    answer = json.loads(out.getvalue())
    assert answer["run"] == str(run.id) and answer["settled"] is True
    assert [(e["kind"], e["task_id"], e["copy"]) for e in answer["events"]] == [
        ("received", "tail-task", 1)
    ]


def test_no_run_or_attempt_id_starts_with_a_dash_that_the_cli_would_read_as_an_option():
    # token_urlsafe starts one id in 64 with "-": 2,000 of each would show it
    ids = [new_run_id() for _ in range(2000)] + [new_attempt_id() for _ in range(2000)]
    assert not [i for i in ids if i.startswith("-")]

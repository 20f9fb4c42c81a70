"""Export of a run: every delivery its own row in CSV, the whole run in JSON, owner only."""

from __future__ import annotations

import csv
import io
import time

import pytest
from django.test import Client

from lessons.learners import SESSION_KEY
from lessons.models import Learner
from teachlab.lab.models import Run, RunEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner() -> Learner:
    return Learner.objects.create()


@pytest.fixture
def client(owner) -> Client:
    client = Client()
    session = client.session
    session[SESSION_KEY] = owner.key
    session.save()
    return client


@pytest.fixture
def run(owner) -> Run:
    """One task received three times (two restored copies), all three executed."""
    now = time.time()
    run = Run.objects.create(
        learner=owner,
        lane="redis-short",
        params={"count": 1, "countdown": 25},
        task_ids=["task-a"],
        visibility_timeout=10,
        fired_at=now - 40,
        settled_at=now - 10,
        status=Run.Status.DONE,
        prediction=1,
    )
    seq = 0
    for copy in (1, 2, 3):
        for kind, t in (("received", 10.0 * (copy - 1)), ("started", 25.0), ("finished", 25.1)):
            seq += 1
            RunEvent.objects.create(
                run=run,
                seq=seq,
                kind=kind,
                task_id="task-a",
                index=0,
                copy=copy,
                worker="=cmd|' /C calc'!A0" if copy == 3 else f"redis-short-{copy}@test",
                redelivered=copy > 1,
                at=now - 40 + t,
                t=t,
                eta=now - 15,
            )
    return run


def test_csv_has_one_row_per_delivery_event_and_keeps_redeliveries_apart(client, run):
    response = client.get(f"/lab/runs/{run.id}/export.csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    receipts = [r for r in rows if r["kind"] == "received"]
    assert [r["copy"] for r in receipts] == ["1", "2", "3"]
    assert [r["redelivered"] for r in receipts] == ["False", "True", "True"]
    assert len(rows) == 9
    assert {r["task_id"] for r in rows} == {"task-a"}


def test_csv_cells_that_look_like_formulas_are_neutralised(client, run):
    text = client.get(f"/lab/runs/{run.id}/export.csv").content.decode()
    assert "'=cmd" in text
    assert "\n=cmd" not in text and ",=cmd" not in text


def test_json_has_parameters_summary_and_every_event(client, run):
    doc = client.get(f"/lab/runs/{run.id}/export.json").json()
    assert doc["params"] == {"count": 1, "countdown": 25}
    assert doc["summary"]["receipts"] == 3
    assert doc["summary"]["executions"] == 3
    assert doc["summary"]["duplicates"] == 2
    assert [e["seq"] for e in doc["events"]] == list(range(1, 10))


def test_nobody_else_can_export_the_run(run):
    stranger = Client()
    session = stranger.session
    session[SESSION_KEY] = Learner.objects.create().key
    session.save()
    assert stranger.get(f"/lab/runs/{run.id}/export.csv").status_code == 404
    assert stranger.get(f"/lab/runs/{run.id}/export.json").status_code == 404
    assert Client().get(f"/lab/runs/{run.id}/export.json").status_code == 404

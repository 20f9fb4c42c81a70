"""A lab event is described once (teachlab/lab/eventlog/labevent.py, FIELDS) and built only by its
codec: a field added there alone goes from the worker's signal through the run's log and the
recorder to the run page, the stored history and `lab tail --json`."""

from __future__ import annotations

import io
import json
import time
from types import SimpleNamespace

import pytest
from django.core.management import call_command

from lessons.models import Learner
from teachlab.lab.eventlog import labevent
from teachlab.lab.eventlog.labevent import (
    DONE,
    Field,
    LabEvent,
    entry_decode,
    entry_fields,
    row_decode,
)
from teachlab.lab.eventlog.recorder import Recorder
from teachlab.lab.eventlog.stream import done_append, log_open, stream_read
from teachlab.lab.live.fragments import render_batch_html
from teachlab.lab.models import Kind, Run, RunEvent
from teachlab.lab.runs.reading import run_events
from teachlab.lab.worker import events
from tests.lab.test_views import _client_for

# A field only this test knows: the worker takes it from the task's keyword arguments, and the
# run page writes it on the copy's row.
LESSON = Field("lesson", "ls", kwarg="lesson", page=True)


class _Context(SimpleNamespace):
    """A task's request context as the worker's signals hand it over (celery.app.task.Context)."""

    def get(self, key, default=None):
        return getattr(self, key, default)


def _delivery(run: Run, task_id: str) -> _Context:
    kwargs = {"run": run.id, "index": 0, "fired_at": run.fired_at, "vt": 10, "tasks": 1,
              "published_at": run.fired_at + 0.25, "lesson": "L-7 <countdown>"}  # fmt: skip
    return _Context(id=task_id, kwargs=kwargs, hostname="redis-short-1@test",
                    delivery_info={"redelivered": False}, eta=None, request_dict={})  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_a_field_added_in_one_place_reaches_the_run_page_the_stored_history_and_the_cli(
    monkeypatch,
):
    monkeypatch.setattr(labevent, "FIELDS", (*labevent.FIELDS, LESSON))
    learner = Learner.objects.create()
    run = Run.objects.create(learner=learner, lane="redis-short", task_ids=["task-a"],
                             params={"count": 1}, visibility_timeout=10,
                             fired_at=time.time() - 5)  # fmt: skip
    log_open(run.id)
    delivery = _delivery(run, "task-a")
    events.event_received(delivery)  # the worker's task_received handler
    delivery.lab_receipt = delivery.request_dict["lab_receipt"]  # the task's context has it
    events.event_from_context(delivery, Kind.STARTED)
    events.event_from_context(delivery, Kind.FINISHED)
    done_append(run_id=run.id, summary={"status": "done"})

    live = [e for e in stream_read(run.id) if e["kind"] != DONE]
    assert [e["lesson"] for e in live] == ["L-7 <countdown>"] * 3
    assert 'data-lesson="L-7 &lt;countdown&gt;"' in render_batch_html(live)  # the live page

    Recorder(runs=[run.id]).step(block_ms=100)
    row = RunEvent.objects.get(run=run, kind=Kind.RECEIVED)
    assert row.extra["lesson"] == "L-7 <countdown>"
    assert [e["lesson"] for e in run_events(run)] == ["L-7 <countdown>"] * 3  # stored history

    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE, settled_at=time.time())
    page = _client_for(learner).get(f"/lab/runs/{run.id}/").content.decode()
    assert 'data-lesson="L-7 &lt;countdown&gt;"' in page  # drawn from the stored events

    out = io.StringIO()
    call_command("lab", "tail", run.id, "--json", "--timeout", "10", stdout=out)
    tailed = json.loads(out.getvalue())["events"]
    assert [e["lesson"] for e in tailed] == ["L-7 <countdown>"] * 3


def test_an_event_goes_through_the_log_and_a_row_and_comes_back_the_same():
    event = LabEvent(run="r1", kind=Kind.RECEIVED, task_id="t", seq=4, index=2, copy=1,
                     worker="w@h", redelivered=True, at=1010.5, t=10.5, since_publish=10.25,
                     eta=1030.0, published_at=1000.25, run_started_at=1000.0,
                     visibility_timeout=10.0, tasks=3, prediction=2,
                     data={"delivery_count": 1})  # fmt: skip
    fields = entry_fields(event)
    assert "c" not in fields and "n" not in fields  # the append writes the copy and tallies
    back = entry_decode("r1", "4-0", {**fields, "c": "1"})
    assert back.as_dict() == {**event.as_dict(), "counts": back.counts}
    run = SimpleNamespace(id="r1", fired_at=1000.0, visibility_timeout=10.0,
                          task_ids=["a", "b", "t"], prediction=2)  # fmt: skip
    assert row_decode(labevent.event_row(event), run).as_dict() == event.as_dict()
    assert LabEvent.from_dict(event.as_dict()).as_dict() == event.as_dict()


def test_the_worker_sends_the_times_it_computed_so_no_reader_derives_them_again():
    kwargs = {"run": "r1", "fired_at": 1000.0, "published_at": 1002.0, "index": 1}
    event = labevent.event_new(kwargs=kwargs, at=1010.5, kind=Kind.STARTED, task_id="t")
    fields = entry_fields(event)
    assert (fields["t"], fields["sp"]) == ("10.5", "8.5")
    # An entry that says otherwise is believed: the reader does not recompute them.
    read = entry_decode("r1", "1-0", {**fields, "t": "10.0", "sp": "8.0"})
    assert (read.t, read.since_publish) == (10.0, 8.0)


@pytest.mark.django_db(transaction=True)
def test_the_migration_moves_stored_publish_times_out_of_data_into_their_column():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("lab", "0004_run_network")], [("lab", "0005_runevent_published_at_extra")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    learner = old.get_model("lessons", "Learner").objects.create()
    run = old.get_model("lab", "Run").objects.create(learner=learner, task_ids=["a"])
    rows = old.get_model("lab", "RunEvent").objects
    common = {"run": run, "kind": "received", "task_id": "a", "index": 0, "at": 1010.0, "t": 10.0}
    rows.create(seq=1, data={"published_at": 1000.25, "error": "boom"}, **common)
    rows.create(seq=2, data={}, **common)  # stored before the recorder kept it
    executor = MigrationExecutor(connection)
    executor.migrate(after)

    stored = {e.seq: (e.published_at, e.data) for e in RunEvent.objects.filter(run_id=run.id)}
    assert stored == {1: (1000.25, {"error": "boom"}), 2: (None, {})}
    assert [e["since_publish"] for e in run_events(Run.objects.get(pk=run.id))] == [9.75, 10.0]

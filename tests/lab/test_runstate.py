"""One run state (teachlab/lab/eventlog/runstate.py): one definition of duplicates, and the same counts
on the run page, in the stored history, in the CLI's JSON and in the experiment checks."""

from __future__ import annotations

import io
import json
import re
import time
from types import SimpleNamespace

import pytest
from django.core.management import call_command

from lessons.models import Learner
from teachlab.lab.eventlog.labevent import DONE, LabEvent
from teachlab.lab.eventlog.recorder import Recorder
from teachlab.lab.eventlog.runstate import RunState, totals
from teachlab.lab.eventlog.settle import copies_pending, run_is_done
from teachlab.lab.eventlog.stream import done_append, log_open, stream_read
from teachlab.lab.experiments.metrics import Event, Observation, run_metric, task_metric
from teachlab.lab.experiments.observe import observation_for_run
from teachlab.lab.models import Kind, Run
from teachlab.lab.runs.reading import run_events, run_summary
from teachlab.lab.worker import events
from teachlab.workshop.content import METRICS, observed_value
from tests.lab.test_views import _client_for


def _ev(kind: str, task: str, copy: int = 1, **more) -> LabEvent:
    return LabEvent(run="r", kind=kind, task_id=task, copy=copy, worker="w1", at=1.0, **more)


def test_duplicates_are_receipts_beyond_the_first_of_each_task_not_receipts_minus_tasks():
    """Task a delivered twice, b once, c never: 3 receipts for 3 tasks. `receipts − tasks`
    (the experiments' old formula) says 0; the learner saw one extra copy, of a."""
    state = RunState(["a", "b", "c"]).apply_all(
        [_ev(Kind.RECEIVED, "a"), _ev(Kind.RECEIVED, "b"), _ev(Kind.RECEIVED, "a", 2)]
    )
    assert state.counts()["receipts"] == 3 and max(0, 3 - 3) == 0  # the old formula's 0
    assert state.counts()["duplicates"] == state.duplicates == 1
    assert [state.tasks[t].duplicates for t in "abc"] == [1, 0, 0]
    # The live counters say the same from the append script's raw tallies.
    assert totals({"received": 3, "first": 2}, 3)["duplicates"] == 1
    # And the experiment checks.
    obs = Observation(
        tasks={"a": 0.0, "b": 0.0, "c": 0.0},
        events=[Event(Kind.RECEIVED, "a", 0.1), Event(Kind.RECEIVED, "b", 0.2),
                Event(Kind.RECEIVED, "a", 0.3)],
    )  # fmt: skip
    assert run_metric(observation=obs, what="duplicates") == 1.0


def test_a_copy_ends_once_and_a_requeue_or_a_retry_keeps_the_task_open():
    state = RunState(["a"])
    state.apply(_ev(Kind.RECEIVED, "a"))
    assert not state.ended(lambda worker, at: True)
    assert state.pending_by_worker() == {"w1": 1}
    state.apply(_ev(Kind.REQUEUED, "a"))
    assert not state.ended(lambda worker, at: True)  # a later copy follows
    state.apply(_ev(Kind.RECEIVED, "a", 2))
    state.apply(_ev(Kind.STARTED, "a", 2))
    state.apply(_ev(Kind.FAILED, "a", 2, data={"retrying": True}))
    assert not state.ended(lambda worker, at: True)
    state.apply(_ev(Kind.RECEIVED, "a", 3))
    state.apply(_ev(Kind.STARTED, "a", 3))
    state.apply(_ev(Kind.FINISHED, "a", 3))
    assert state.ended(lambda worker, at: False)
    task = state.tasks["a"]
    assert (task.receipts, task.executions, task.retries, task.failures) == (3, 2, 1, 0)
    assert state.per_task()["a"]["failed"] == 1 and state.per_task()["a"]["requeued"] == 1


def test_a_copy_whose_holder_died_counts_as_lost_once_a_later_copy_arrived():
    state = RunState(["a"]).apply_all(
        [_ev(Kind.RECEIVED, "a"), _ev(Kind.RECEIVED, "a", 2), _ev(Kind.FINISHED, "a", 2)]
    )
    asked = []
    assert state.ended(lambda worker, at: asked.append(worker) or True)
    assert asked == ["w1"]  # the registry is asked about the silent copy only
    assert not state.ended(lambda worker, at: False)  # its holder lives: it will report


class _Context(SimpleNamespace):
    def get(self, key, default=None):
        return getattr(self, key, default)


def _deliver(run: Run, task_id: str, index: int, *, ends: tuple[str, ...]) -> None:
    """One delivery through the worker's own handlers: received, then `ends`."""
    kwargs = {"run": run.id, "index": index, "fired_at": run.fired_at, "vt": 10, "tasks": 3,
              "published_at": run.fired_at}  # fmt: skip
    context = _Context(id=task_id, kwargs=kwargs, hostname="redis-short-1@test",
                       delivery_info={"redelivered": False}, eta=None, request_dict={})  # fmt: skip
    events.event_received(context)
    context.lab_receipt = context.request_dict["lab_receipt"]
    for kind in ends:
        events.event_from_context(context, kind)


def _page_counter(html: str, label: str) -> int:
    found = re.search(rf"<dt>{label}</dt><dd[^>]*>(\d+)</dd>", html)
    assert found, label
    return int(found.group(1))


@pytest.mark.django_db(transaction=True)
def test_the_page_the_stored_history_the_cli_and_the_checks_count_the_same_events():
    """Task a delivered twice (both copies run), b once and guarded, c never: the case where
    the two old duplicates formulas disagree, read by every screen."""
    learner = Learner.objects.create()
    run = Run.objects.create(learner=learner, lane="redis-short", task_ids=["a", "b", "c"],
                             params={"count": 3}, visibility_timeout=10,
                             fired_at=time.time() - 5)  # fmt: skip
    log_open(run.id)
    _deliver(run, "a", 0, ends=(Kind.STARTED, Kind.FINISHED))
    _deliver(run, "b", 1, ends=(Kind.STARTED, Kind.SUPPRESSED))
    _deliver(run, "a", 0, ends=(Kind.STARTED, Kind.FINISHED))
    Recorder(runs=[run.id]).step(block_ms=100)
    expected = {"tasks": 3, "receipts": 3, "executions": 2, "suppressed": 1, "duplicates": 1}

    live = [e for e in stream_read(run.id) if e["kind"] != DONE]
    history = run_events(run)
    assert [e["counts"] for e in history] == [e["counts"] for e in live]  # event by event
    summary = run_summary(run)
    assert {k: summary[k] for k in expected} == expected
    assert {k: history[-1]["counts"][k] for k in expected} == expected

    obs = observation_for_run(run=run)
    checks = {k: run_metric(observation=obs, what=k) for k in expected if k != "duplicates"}
    checks["duplicates"] = run_metric(observation=obs, what="duplicates")
    assert checks == {k: float(v) for k, v in expected.items()}
    assert task_metric(observation=obs, what="receipts") == {"a": 2.0, "b": 1.0, "c": 0.0}
    assert {t: row["received"] for t, row in summary["per_task"].items()} == {
        "a": 2, "b": 1, "c": 0
    }  # fmt: skip
    assert not run_is_done(run) and copies_pending(run) == {}
    for metric in METRICS:  # what a workshop room predicts, read as the checks read it
        assert observed_value(summary, metric) == run_metric(observation=obs, what=metric)

    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE, settled_at=time.time())
    done_append(run_id=run.id, summary=run_summary(Run.objects.get(pk=run.pk)))
    page = _client_for(learner).get(f"/lab/runs/{run.id}/").content.decode()
    on_page = {
        "tasks": _page_counter(page, "Tasks sent"),
        "receipts": _page_counter(page, "Receipts"),
        "executions": _page_counter(page, "Executions"),
        "suppressed": _page_counter(page, "Suppressed"),
        "duplicates": _page_counter(page, "Duplicates"),
    }
    assert on_page == expected
    assert "Receipts beyond the first of each task" in page  # said next to the figure

    out = io.StringIO()
    call_command("lab", "tail", run.id, "--json", "--timeout", "10", stdout=out)
    tailed = json.loads(out.getvalue())
    assert tailed["settled"]
    assert {k: tailed["events"][-1]["counts"][k] for k in expected} == expected

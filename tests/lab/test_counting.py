"""Event counting in the run's log (stream.py): the per-run seq, the copy number of each
delivery, the per-kind tallies every entry carries, and the event dict read back. On the tests'
private Redis, through the same Lua call the workers use."""

from __future__ import annotations

import json
import threading
import uuid

import pytest
from django.conf import settings

from teachlab.lab.eventlog import reseed, stream
from teachlab.lab.eventlog.labevent import counts_parse, seq_of
from teachlab.lab.eventlog.runstate import totals
from teachlab.lab.eventlog.stream import (
    ACTIVE,
    KEY_TTL,
    done_append,
    entry_append,
    entry_event,
    log_open,
    stream_key,
    stream_read,
)
from teachlab.lab.runs.store import app_redis
from teachlab.lab.worker.wire import WireUnsupported


def _append(run: str, kind: str, task: str, known_copy: int = 0, **fields) -> tuple[int, int]:
    base = {"k": kind, "ti": task, "a": "1000.5", "f": "1000.0", "p": "1000.25", "n_tasks": "2"}
    return entry_append(
        run_id=run, kind=kind, task_id=task, known_copy=known_copy, fields={**base, **fields}
    )


@pytest.fixture
def run() -> str:
    return uuid.uuid4().hex


def test_seq_rises_by_one_per_event_and_copies_count_deliveries_of_each_task(run):
    assert _append(run, "received", "a") == (1, 1)
    assert _append(run, "received", "b") == (2, 1)
    assert _append(run, "received", "a") == (3, 2)
    # Not a delivery: the copy is the task's latest delivery, or the one the worker knows.
    assert _append(run, "started", "a") == (4, 2)
    assert _append(run, "finished", "a", known_copy=1) == (5, 1)
    assert _append(run, "revoked", "c") == (6, 1)  # a task never received counts as copy 1


def test_every_entry_carries_the_tallies_as_of_itself(run):
    _append(run, "received", "a")
    _append(run, "received", "a")
    _append(run, "received", "b")
    _append(run, "started", "a")
    _append(run, "suppressed", "a")
    events = stream_read(run)
    assert [e["seq"] for e in events] == [1, 2, 3, 4, 5]
    assert [e["copy"] for e in events] == [1, 2, 1, 2, 2]
    first, second, third, started, suppressed = (e["counts"] for e in events)
    assert (first["receipts"], first["duplicates"]) == (1, 0)
    assert (second["receipts"], second["duplicates"]) == (2, 1)
    assert (third["receipts"], third["duplicates"]) == (3, 1)
    assert (started["executions"], started["suppressed"]) == (1, 0)
    assert (suppressed["executions"], suppressed["suppressed"]) == (0, 1)
    assert suppressed["receipts"] == 3 and suppressed["tasks"] == 2


def test_a_read_after_an_entry_starts_past_it_and_the_done_marker_follows_the_last(run):
    for _ in range(3):
        _append(run, "received", "a")
    assert [e["seq"] for e in stream_read(run, after="1-0")] == [2, 3]
    assert [e["seq"] for e in stream_read(run, after="0-0", count=2)] == [1, 2]
    marker = done_append(run_id=run, summary={"status": "done", "receipts": 3})
    assert seq_of(marker) == 3 and marker.endswith("-1")
    done = stream_read(run, after="3-0")
    assert done == [
        {"run": run, "id": marker, "kind": "done", "summary": {"status": "done", "receipts": 3}}
    ]
    assert stream_read(run, after="0-0", block=100)[0]["seq"] == 1


def test_counts_parse_reads_the_tally_string_and_ignores_what_is_not_a_pair():
    assert counts_parse("received=3,first=2,started=1") == {"received": 3, "first": 2, "started": 1}
    assert counts_parse("") == {}
    assert counts_parse("junk,received=2") == {"received": 2}
    assert counts_parse("a=5") == {"a": 5}
    assert counts_parse(None) == {}
    assert counts_parse("first=0,,received=12,") == {"first": 0, "received": 12}


def test_counts_parse_raises_on_a_count_that_is_not_a_number():
    for text in ("received=x", "received=1=2", "received="):
        with pytest.raises(ValueError):
            counts_parse(text)


def test_entry_event_turns_short_fields_into_the_event_dict():
    fields = {
        "k": "received", "ti": "task-1", "i": "3", "c": "2", "w": "w1@host", "r": "1",
        "a": "1010.5", "f": "1000.0", "p": "1002.0", "e": "1025.0", "v": "10.0",
        "n_tasks": "4", "pr": "7", "n": "received=5,first=4,started=2,suppressed=1",
        "d": json.dumps({"retrying": True}),
    }  # fmt: skip
    event = entry_event("run-1", "9-0", fields)
    assert event == {
        "run": "run-1",
        "id": "9-0",
        "seq": 9,
        "kind": "received",
        "task_id": "task-1",
        "index": 3,
        "copy": 2,
        "worker": "w1@host",
        "redelivered": True,
        "at": 1010.5,
        "t": 10.5,
        "since_publish": 8.5,
        "eta": 1025.0,
        "published_at": 1002.0,
        "run_started_at": 1000.0,
        "visibility_timeout": 10.0,
        "tasks": 4,
        "prediction": 7,
        "counts": totals({"received": 5, "first": 4, "started": 2, "suppressed": 1}, 4),
        "data": {"retrying": True},
    }
    assert event["counts"]["receipts"] == 5 and event["counts"]["executions"] == 1


def test_entry_event_defaults_when_optional_fields_are_missing():
    event = entry_event("run-1", "1-0", {"k": "started", "a": "5.25"})
    assert event["task_id"] == "" and event["worker"] == ""
    assert (event["index"], event["copy"], event["tasks"]) == (0, 1, 1)
    assert event["redelivered"] is False
    assert (event["t"], event["since_publish"]) == (0.0, 0.0)
    assert event["run_started_at"] == event["published_at"] == 5.25
    assert event["eta"] is None and event["visibility_timeout"] is None
    assert event["prediction"] is None and event["data"] == {}
    assert event["counts"]["receipts"] == 0
    assert (
        entry_event("r", "2-0", {"k": "started", "a": "5", "f": "4", "p": "", "pr": ""})[
            "published_at"
        ]
        == 4.0
    )


def test_an_opened_run_keeps_its_counters_under_the_keys_other_readers_use(run, monkeypatch):
    """settle.py reads the counts hash, the recorder the set of active runs, the consumer's
    tests the copy counter: the append must write exactly those keys, with the run's expiry."""
    monkeypatch.setattr(reseed, "log_floors", _no_floors)  # an opened run never needs them
    log_open(run)
    assert _append(run, "received", "a", w="w1") == (1, 1)
    assert _append(run, "received", "a") == (2, 2)
    assert _append(run, "started", "a") == (3, 2)
    r = app_redis()
    assert r.get(f"lab:run:{run}:seq") == "3"
    assert r.get(f"lab:run:{run}:copy:a") == "2"
    assert r.hgetall(f"lab:run:{run}:counts") == {"received": "2", "first": "1", "started": "1"}
    assert r.sismember(ACTIVE, run)
    assert not r.exists(f"lab:run:{run}:reset")  # numbering never resumed
    for key in (f"lab:run:{run}:seq", f"lab:run:{run}:copy:a", f"lab:run:{run}:counts"):
        assert KEY_TTL - 5 < r.ttl(key) <= KEY_TTL, key
    assert KEY_TTL - 5 < r.ttl(stream_key(run)) <= KEY_TTL
    entries = r.xrange(stream_key(run))
    assert [entry_id for entry_id, _ in entries] == ["1-0", "2-0", "3-0"]
    first = entries[0][1]
    assert first["c"] == "1" and counts_parse(first["n"]) == {"received": 1, "first": 1}
    assert (first["k"], first["ti"], first["w"], first["a"]) == ("received", "a", "w1", "1000.5")
    assert stream_read(run)[2]["counts"]["executions"] == 1


def _no_floors(**_kwargs):
    raise AssertionError("an opened run's counters were there: no floors needed")


def test_a_run_whose_counters_were_lost_resumes_after_what_was_stored(run, monkeypatch):
    asked = []

    def floors(*, run_id, task_id):
        asked.append((run_id, task_id))
        return reseed.Floors(seq=41, copy=3, counts="received=5,first=2,started=4")

    monkeypatch.setattr(reseed, "log_floors", floors)
    # The seq counter is gone (no log_open): the append asks for the floors once, then goes on.
    assert _append(run, "received", "t7") == (42, 4)
    assert asked == [(run, "t7")]
    assert _append(run, "started", "t7") == (43, 4)
    assert _append(run, "finished", "t7", known_copy=3) == (44, 3)
    assert asked == [(run, "t7")]
    r = app_redis()
    assert r.get(f"lab:run:{run}:reset") == "41"  # readers learn where numbering resumed
    counts = r.hgetall(f"lab:run:{run}:counts")
    assert counts == {"received": "6", "first": "2", "started": "5", "finished": "1"}
    event = stream_read(run)[0]
    assert (event["seq"], event["copy"], event["kind"], event["task_id"]) == (
        42,
        4,
        "received",
        "t7",
    )
    assert event["counts"]["receipts"] == 6
    # Another task first received after the loss numbers its copies from its own floor.
    assert _append(run, "received", "t8") == (45, 4)
    assert asked == [(run, "t7"), (run, "t8")]


def test_entry_event_rounds_times_to_four_places_and_reads_a_missing_kind_as_empty():
    fields = {"a": "1000.123456", "f": "1000.0", "p": "1000.00001"}
    event = entry_event("r", "3-0", fields)
    assert (event["t"], event["since_publish"]) == (0.1235, 0.1234)
    assert event["kind"] == "" and event["seq"] == 3
    assert (event["published_at"], event["run_started_at"]) == (1000.00001, 1000.0)


def test_entry_event_of_the_done_marker():
    fields = {"k": "done", "s": json.dumps({"status": "done", "receipts": 2})}
    assert entry_event("r", "7-1", fields) == {
        "run": "r",
        "id": "7-1",
        "kind": "done",
        "summary": {"status": "done", "receipts": 2},
    }


def test_opening_a_run_starts_its_numbering_once_with_the_runs_expiry(run, monkeypatch):
    monkeypatch.setattr(reseed, "log_floors", _no_floors)
    r = app_redis()
    log_open(run)
    assert r.get(f"lab:run:{run}:seq") == "0"
    assert KEY_TTL - 5 < r.ttl(f"lab:run:{run}:seq") <= KEY_TTL
    _append(run, "received", "a")
    _append(run, "received", "b")
    log_open(run)  # opened again (a retried fire): the numbering carries on
    assert _append(run, "received", "a") == (3, 2)


def test_the_done_marker_stores_its_summary_as_compact_json(run):
    _append(run, "received", "a")
    marker = done_append(run_id=run, summary={"status": "done", "receipts": 1})
    entries = app_redis().xrange(stream_key(run))
    assert entries[-1] == (marker, {"k": "done", "s": '{"status":"done","receipts":1}'})
    assert KEY_TTL - 5 < app_redis().ttl(stream_key(run)) <= KEY_TTL


def test_a_read_without_a_count_returns_a_thousand_events_at_most(run):
    r = app_redis()
    with r.pipeline(transaction=False) as pipe:
        for seq in range(1, 1002):
            pipe.xadd(stream_key(run), {"k": "started", "a": "1.0"}, id=f"{seq}-0")
        pipe.execute()
    events = stream_read(run)
    assert (len(events), events[-1]["seq"]) == (1000, 1000)
    assert [e["seq"] for e in stream_read(run, after="1000-0")] == [1001]


def test_a_blocking_read_waits_for_the_next_entry(run):
    _append(run, "received", "a")
    later = threading.Timer(0.2, lambda: _append(run, "started", "a"))
    later.start()
    try:
        events = stream_read(run, after="1-0", block=10_000)
    finally:
        later.join()
    assert [(e["seq"], e["kind"]) for e in events] == [(2, "started")]
    # A blocking read that finds entries at once keeps to its count too.
    assert [e["seq"] for e in stream_read(run, after="0-0", count=1, block=100)] == [1]
    # One that finds nothing before its time is up returns nothing.
    assert stream_read(run, after="2-0", block=100) == []


def test_the_append_speaks_evalsha_on_the_wire_and_loads_the_script_when_redis_forgot_it(
    run, monkeypatch
):
    """The worker's call goes over wire.py to the app database; a Redis that lost its script
    cache (SCRIPT FLUSH here, a restart in life) answers NOSCRIPT once, then the script is
    loaded and the call made again. This is the tests' private Redis."""
    calls = []
    real_wire_call = stream.wire_call

    def spy(url, args):
        reply = real_wire_call(url, args)
        calls.append((url, args[0], isinstance(reply, Exception)))
        return reply

    monkeypatch.setattr(stream, "wire_call", spy)
    monkeypatch.setattr(reseed, "log_floors", _no_floors)
    log_open(run)
    app_redis().script_flush()
    assert _append(run, "received", "a") == (1, 1)
    url = f"{settings.REDIS_URL}/{settings.REDIS_DB_APP}"
    assert calls == [(url, "EVALSHA", True), (url, "EVALSHA", False)]
    assert _append(run, "received", "a") == (2, 2)
    assert len(calls) == 3


def test_without_the_wire_the_append_goes_through_redis_py(run, monkeypatch):
    def unsupported(url, args):
        raise WireUnsupported(url)

    monkeypatch.setattr(stream, "wire_call", unsupported)
    monkeypatch.setattr(stream, "_append_script", None)
    monkeypatch.setattr(reseed, "log_floors", _no_floors)
    log_open(run)
    assert _append(run, "received", "a") == (1, 1)
    script = stream._append_script
    assert script is not None
    assert _append(run, "received", "a") == (2, 2)
    assert stream._append_script is script  # registered once
    assert app_redis().hget(f"lab:run:{run}:counts", "received") == "2"

"""The worker's direct Redis path (teachlab/lab/worker/wire.py) against the private test Redis: replies
parsed as redis-py would, errors surfaced as redis-py's exceptions, a dead socket replaced."""

import socket

import pytest
import redis
from django.conf import settings

from teachlab.lab.eventlog.stream import entry_append, log_open, stream_read
from teachlab.lab.runs.store import app_redis
from teachlab.lab.worker import wire
from tests.stack import free_port


@pytest.fixture
def url():
    wire.wire_close()
    yield f"{settings.REDIS_URL}/{settings.REDIS_DB_APP}"
    wire.wire_close()


def test_replies_of_every_shape_come_back_as_python_values(url):
    assert wire.wire_call(url, ["SET", "wire:test:a", "héllo"]) == "OK"
    assert wire.wire_call(url, ["GET", "wire:test:a"]) == "héllo"
    assert wire.wire_call(url, ["GET", "wire:test:missing"]) is None
    assert wire.wire_call(url, ["INCRBY", "wire:test:n", "41"]) == 41
    nested = wire.wire_call(url, ["EVAL", "return {1, {'x', 2}, 'y'}", "0"])
    assert nested == [1, ["x", 2], "y"]
    assert app_redis().get("wire:test:a") == "héllo"  # the same database redis-py uses


def test_an_error_reply_is_returned_as_a_response_error_and_the_socket_stays_usable(url):
    reply = wire.wire_call(url, ["NOSUCHCOMMAND"])
    assert isinstance(reply, redis.ResponseError)
    assert "unknown command" in str(reply).lower()
    assert wire.wire_call(url, ["PING"]) == "PONG"


def test_a_socket_redis_closed_is_replaced_without_losing_the_command(url):
    assert wire.wire_call(url, ["CLIENT", "SETNAME", "wire-test"]) == "OK"
    ours = [c for c in app_redis().client_list() if c.get("name") == "wire-test"]
    assert len(ours) == 1
    app_redis().client_kill_filter(_id=ours[0]["id"])  # only this test's socket
    before = int(app_redis().get("wire:test:count") or 0)
    assert wire.wire_call(url, ["INCR", "wire:test:count"]) == before + 1
    assert int(app_redis().get("wire:test:count")) == before + 1  # once, not twice


def test_a_redis_that_does_not_answer_is_a_connection_error():
    wire.wire_close()
    with pytest.raises(redis.ConnectionError):
        wire.wire_call(f"redis://127.0.0.1:{free_port()}/0", ["PING"])


def test_a_redis_that_never_replies_is_a_timeout_not_a_retry(monkeypatch):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    port = silent.getsockname()[1]
    monkeypatch.setattr(wire, "TIMEOUT", 0.3)
    wire.wire_close()
    try:
        # The listener accepts (the kernel does) and never answers SELECT: a timeout.
        with pytest.raises((redis.TimeoutError, redis.ConnectionError)):
            wire.wire_call(f"redis://127.0.0.1:{port}/0", ["PING"])
    finally:
        wire.wire_close()
        silent.close()


def test_urls_it_does_not_speak_are_left_to_redis_py():
    with pytest.raises(wire.WireUnsupported):
        wire.wire_call("rediss://127.0.0.1:6379/0", ["PING"])
    with pytest.raises(wire.WireUnsupported):
        wire.wire_call("unix:///tmp/redis.sock", ["PING"])


def test_entry_append_numbers_events_and_copies_through_the_direct_path(url):
    app_redis().script_flush()  # the first call meets NOSCRIPT and loads the script
    fields = {"k": "received", "ti": "t1", "i": "0", "w": "w1", "r": "0", "a": "1.0"}
    run = "wire-test-run"
    log_open(run)  # as firing does: the numbering starts at 0
    assert entry_append(run_id=run, kind="received", task_id="t1", known_copy=0, fields=fields) == (
        1,
        1,
    )
    assert entry_append(run_id=run, kind="received", task_id="t1", known_copy=0, fields=fields) == (
        2,
        2,
    )
    started = {**fields, "k": "started"}
    assert entry_append(run_id=run, kind="started", task_id="t1", known_copy=2, fields=started) == (
        3,
        2,
    )
    events = stream_read(run)
    assert [(e["seq"], e["kind"], e["copy"]) for e in events] == [
        (1, "received", 1),
        (2, "received", 2),
        (3, "started", 2),
    ]
    assert events[-1]["counts"]["receipts"] == 2

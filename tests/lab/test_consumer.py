"""The live run socket, through the whole ASGI stack (origin check, sessions, routing) and the
real channel layer on the tests' private Redis."""

from __future__ import annotations

import functools
import time

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.sessions.backends.db import SessionStore

from lessons.learners import SESSION_KEY
from lessons.models import Learner
from teachlab.asgi import application
from teachlab.core.socketnames import PING, PONG
from teachlab.lab.eventlog.stream import entry_append
from teachlab.lab.models import Run, RunEvent
from teachlab.lab.runs.store import app_redis

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = (b"origin", b"http://127.0.0.1")
HOST = (b"host", b"127.0.0.1")  # a browser always sends Host; the origin check compares with it


def asynctest(fn):
    """Run an async test body on its own loop (no pytest-asyncio here)."""

    @functools.wraps(fn)
    def wrapper():
        return async_to_sync(fn)()

    return wrapper


def _learner_with_session() -> tuple[Learner, str]:
    learner = Learner.objects.create()
    session = SessionStore()
    session[SESSION_KEY] = learner.key
    session.create()
    return learner, session.session_key


def _finished_run(learner: Learner, receipts: int = 3) -> Run:
    """A run with one task received `receipts` times, as the worker would have stored it."""
    now = time.time()
    run = Run.objects.create(
        learner=learner,
        lane="redis-short",
        params={"count": 1, "countdown": 25},
        task_ids=["task-a"],
        visibility_timeout=10,
        fired_at=now - 30,
        status=Run.Status.DONE,
    )
    for n in range(receipts):
        RunEvent.objects.create(
            run=run,
            seq=n + 1,
            kind="received",
            task_id="task-a",
            index=0,
            copy=n + 1,
            worker=f"redis-short-{n % 2 + 1}@test",
            redelivered=n > 0,
            at=now - 30 + 10 * n,
            t=10.0 * n,
            eta=now - 5,
        )
    # The run's counter, as the workers' appends left it: the next event is number receipts+1.
    app_redis().set(f"lab:run:{run.id}:seq", receipts)
    app_redis().set(f"lab:run:{run.id}:copy:task-a", receipts)
    return run


@sync_to_async
def _append(run: Run) -> int:
    """One more delivery of task-a, appended to the run's log as a worker does."""
    seq, _ = entry_append(
        run_id=run.id,
        kind="received",
        task_id="task-a",
        known_copy=0,
        fields={"k": "received", "ti": "task-a", "i": "0", "w": "redis-short-1@test",
                "r": "1", "a": repr(time.time()), "f": repr(run.fired_at), "n_tasks": "1"},
    )  # fmt: skip
    return seq


def _communicator(run_id: str, session_key: str | None, origin=ORIGIN) -> WebsocketCommunicator:
    headers = [HOST] + ([origin] if origin else [])
    if session_key:
        headers.append((b"cookie", f"sessionid={session_key}".encode()))
    return WebsocketCommunicator(application, f"/ws/lab/runs/{run_id}/", headers=headers)


@asynctest
async def test_owner_connects_and_gets_every_stored_receipt_then_live_ones():
    learner, key = await sync_to_async(_learner_with_session)()
    run = await sync_to_async(_finished_run)(learner, receipts=3)
    ws = _communicator(run.id, key)
    connected, _ = await ws.connect(timeout=10)
    assert connected
    backlog = await ws.receive_from(timeout=5)
    # One row per delivery: three copies of the same task id, never folded.
    assert backlog.count('id="rc-task-a-') == 3
    # The run is over, so its frame's one status says so (not "connected", then that).
    assert backlog.count('id="live-status"') == 1
    assert "Run finished" in backlog and "Live: connected." not in backlog

    assert await _append(run) == 4
    live = await ws.receive_from(timeout=5)
    assert 'id="rc-task-a-4"' in live
    await ws.disconnect()


def _cursor(frame: str) -> str:
    return frame.split('id="live-cursor" data-last="', 1)[1].split('"', 1)[0]


@asynctest
async def test_a_socket_that_comes_back_gets_only_what_it_missed():
    """Reconnecting with the last id it saw, a page gets the events after it, once."""
    learner, key = await sync_to_async(_learner_with_session)()
    run = await sync_to_async(_finished_run)(learner, receipts=2)
    first = _communicator(run.id, key)
    assert (await first.connect(timeout=10))[0]
    seen = _cursor(await first.receive_from(timeout=5))
    await first.disconnect()
    await _append(run)
    await _append(run)

    again = WebsocketCommunicator(
        application,
        f"/ws/lab/runs/{run.id}/?after={seen}",
        headers=[HOST, ORIGIN, (b"cookie", f"sessionid={key}".encode())],
    )
    assert (await again.connect(timeout=10))[0]
    frames = ""
    while frames.count('id="rc-task-a-') < 2:
        frames += await again.receive_from(timeout=5)
    assert 'id="rc-task-a-3"' in frames and 'id="rc-task-a-4"' in frames
    assert 'id="rc-task-a-1"' not in frames and 'id="rc-task-a-2"' not in frames
    assert await again.receive_nothing(timeout=0.5)
    await again.disconnect()


@asynctest
async def test_a_finished_run_replays_over_its_socket_at_the_events_own_pace():
    """?replay=10 sends the stored receipts again, drawn as live ones, ten times faster."""
    learner, key = await sync_to_async(_learner_with_session)()
    run = await sync_to_async(_finished_run)(learner, receipts=3)  # at t = 0, 10 and 20 s
    ws = WebsocketCommunicator(
        application,
        f"/ws/lab/runs/{run.id}/?replay=10",
        headers=[HOST, ORIGIN, (b"cookie", f"sessionid={key}".encode())],
    )
    assert (await ws.connect(timeout=10))[0]
    reset = await ws.receive_from(timeout=5)
    assert "Replaying at 10×" in reset
    # counters from 0, and the explanation waits with them (no final text beside a 0)
    assert 'id="explain" hx-swap-oob="true" class="panel explain pending"' in reset
    arrived = {}
    started = time.monotonic()
    while len(arrived) < 3:
        frame = await ws.receive_from(timeout=5)
        for copy in (1, 2, 3):
            if f'id="rc-task-a-{copy}"' in frame:
                arrived.setdefault(copy, time.monotonic() - started)
    assert arrived[1] < arrived[2] < arrived[3]
    assert 1.5 < arrived[3] - arrived[1] < 4  # 20 s of run at 10x
    end = ""
    while "What happened and why" not in end or "copies seen" not in end:
        end += await ws.receive_from(timeout=5)
    assert "copies seen: <strong>3</strong>" in end  # the explanation is back, as counted
    await ws.disconnect()


@asynctest
async def test_another_learners_socket_is_refused_for_a_run_it_does_not_own():
    owner, _ = await sync_to_async(_learner_with_session)()
    _, stranger_key = await sync_to_async(_learner_with_session)()
    run = await sync_to_async(_finished_run)(owner)
    ws = _communicator(run.id, stranger_key)
    connected, _ = await ws.connect(timeout=10)
    assert not connected


@asynctest
async def test_a_socket_without_a_learner_is_refused():
    owner, _ = await sync_to_async(_learner_with_session)()
    run = await sync_to_async(_finished_run)(owner)
    ws = _communicator(run.id, None)
    connected, _ = await ws.connect(timeout=10)
    assert not connected


@asynctest
async def test_a_socket_from_a_foreign_origin_is_refused_even_for_the_owner():
    learner, key = await sync_to_async(_learner_with_session)()
    run = await sync_to_async(_finished_run)(learner)
    ws = _communicator(run.id, key, origin=(b"origin", b"https://evil.example"))
    connected, _ = await ws.connect(timeout=10)
    assert not connected


async def _sender_and_watcher(*, receipts: int):
    """A finished run and two of its owner's sockets, each past its first (state) frame."""
    learner, key = await sync_to_async(_learner_with_session)()
    run = await sync_to_async(_finished_run)(learner, receipts=receipts)
    sender, watcher = _communicator(run.id, key), _communicator(run.id, key)
    assert (await sender.connect(timeout=10))[0] and (await watcher.connect(timeout=10))[0]
    await sender.receive_from(timeout=5)
    await watcher.receive_from(timeout=5)
    return run, sender, watcher


@asynctest
async def test_a_garbage_frame_gets_an_error_to_that_client_only_and_changes_nothing():
    run, sender, watcher = await _sender_and_watcher(receipts=2)

    frames = [
        {"text_data": "{not json"},
        {"text_data": '{"action": "delete-everything"}'},
        {"bytes_data": b"\x00\xff" * 10},
        {"text_data": "null"},
        {"text_data": '["resync"]'},
        {"text_data": '{"action": ["resync"]}'},
        {"text_data": "x" * 60_000},  # under the frame cap (tests/security/test_socket_frames.py)
        {"text_data": "[" * 30_000 + "]" * 30_000},  # nested past the parser's recursion
    ]
    for frame in frames:
        await sender.send_to(**frame)
    for _ in frames:
        reply = await sender.receive_from(timeout=5)
        assert 'id="live-error"' in reply and "did not understand" in reply
    assert await watcher.receive_nothing(timeout=0.5)
    assert await sync_to_async(RunEvent.objects.filter(run=run).count)() == 2

    # The socket still works afterwards: a live event reaches both.
    await _append(run)
    assert 'id="rc-task-a-3"' in await sender.receive_from(timeout=5)
    assert 'id="rc-task-a-3"' in await watcher.receive_from(timeout=5)
    await sender.disconnect()
    await watcher.disconnect()


@asynctest
async def test_events_appended_while_many_sockets_connect_arrive_once_each_in_order():
    """Backlog and live are one path: whatever moment a socket joins, it holds every event
    exactly once, and in seq order."""
    import asyncio

    learner, key = await sync_to_async(_learner_with_session)()
    run = await sync_to_async(_finished_run)(learner, receipts=1)

    async def watch(ws) -> list[int]:
        assert (await ws.connect(timeout=10))[0]
        got = ""
        while got.count('id="rc-task-a-') < 21:
            got += await ws.receive_from(timeout=10)
        return [int(part.split('"', 1)[0]) for part in got.split('id="rc-task-a-')[1:]]

    async def appends() -> None:
        for _ in range(20):
            await _append(run)
            await asyncio.sleep(0.005)

    sockets = [_communicator(run.id, key) for _ in range(8)]
    results = await asyncio.gather(appends(), *(watch(ws) for ws in sockets))
    for copies in results[1:]:
        assert copies == list(range(1, 22))
    for ws in sockets:
        await ws.disconnect()


@asynctest
async def test_a_running_redis_run_gets_a_first_look_inside_the_broker_on_connect():
    learner, key = await sync_to_async(_learner_with_session)()
    run = await sync_to_async(_finished_run)(learner, receipts=1)
    run.status = Run.Status.RUNNING
    await sync_to_async(run.save)(update_fields=["status"])
    ws = _communicator(run.id, key)
    assert (await ws.connect(timeout=10))[0]
    first = await ws.receive_from(timeout=5)
    assert 'id="broker"' in first and "Queue length" in first
    await ws.disconnect()


@asynctest
async def test_a_resync_redraws_the_run_but_not_again_within_a_few_seconds():
    learner, key = await sync_to_async(_learner_with_session)()
    run = await sync_to_async(_finished_run)(learner, receipts=2)
    ws = _communicator(run.id, key)
    assert (await ws.connect(timeout=10))[0]
    await ws.receive_from(timeout=5)
    await ws.send_to(text_data='{"action": "resync"}')
    redraw = await ws.receive_from(timeout=5)
    assert redraw.count('id="rc-task-a-') == 2
    await ws.send_to(text_data='{"action": "resync"}')
    refused = await ws.receive_from(timeout=5)
    assert "Resync asked too often" in refused
    assert 'id="rc-task-a-' not in refused
    await ws.disconnect()


def test_a_socket_whose_database_is_busy_closes_to_be_retried_not_crashed(monkeypatch):
    from django.db import OperationalError

    from teachlab.core.dbasync import CLOSE_TRY_AGAIN
    from teachlab.lab.runs import reading

    learner, key = _learner_with_session()
    run = _finished_run(learner, receipts=2)

    def busy(*args, **kwargs):
        raise OperationalError("couldn't get a connection after 10.00 sec")

    async def connect() -> tuple[bool, object]:
        return await _communicator(run.id, key).connect(timeout=10)

    monkeypatch.setattr(reading, "run_for_learner", busy)
    assert async_to_sync(connect)() == (False, CLOSE_TRY_AGAIN)

    monkeypatch.undo()  # the database answers again: the retry gets the run

    async def retry() -> str:
        ws = _communicator(run.id, key)
        connected, _ = await ws.connect(timeout=10)
        assert connected
        frame = await ws.receive_from(timeout=5)
        await ws.disconnect()
        return frame

    assert async_to_sync(retry)().count('id="rc-task-a-') == 2


def test_run_and_room_sockets_open_no_channel_of_their_own_in_redis():
    """Their messages come through the process's hub: the channel Channels opens for each
    consumer is on the in-process layer their alias names, so nothing subscribes in Redis."""
    from channels.layers import InMemoryChannelLayer, get_channel_layer

    from teachlab.lab.live.consumers import RunConsumer
    from teachlab.workshop.consumers import RoomSocket

    assert not isinstance(get_channel_layer(), InMemoryChannelLayer)  # the hubs' layer: Redis
    for consumer in (RunConsumer, RoomSocket):
        assert isinstance(get_channel_layer(consumer.channel_layer_alias), InMemoryChannelLayer)


@asynctest
async def test_the_pages_heartbeat_ping_is_answered_with_a_pong_to_that_client_only():
    _, sender, watcher = await _sender_and_watcher(receipts=1)
    for _ in range(3):
        await sender.send_to(text_data=PING)
        assert await sender.receive_from(timeout=5) == PONG
    assert await watcher.receive_nothing(timeout=0.5)
    await sender.disconnect()
    await watcher.disconnect()

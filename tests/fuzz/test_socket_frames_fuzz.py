"""Generated frames on the live run socket (issue 14, item 2): every frame gets an answer, the
socket stays open, and nothing is stored. Through the whole ASGI stack (origin check, session,
routing) with Channels' WebsocketCommunicator. TEACHLAB_FUZZ_EXAMPLES frames in all, ten per
connection, since connecting costs more than a frame."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from hypothesis import given
from hypothesis import strategies as st

from teachlab.lab.models import RunEvent
from tests.fuzz.test_forms_fuzz import EXAMPLES, FUZZ
from tests.lab.test_consumer import _communicator, _finished_run, _learner_with_session

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
frames = st.one_of(
    st.text(min_size=1, max_size=200).map(lambda t: {"text_data": t}),
    st.binary(min_size=1, max_size=200).map(lambda b: {"bytes_data": b}),
    json_values.map(lambda v: {"text_data": json.dumps(v)}),
    st.dictionaries(st.sampled_from(["action", "after", "seq", "run"]), json_values).map(
        lambda d: {"text_data": json.dumps(d)}
    ),
)


@pytest.fixture
def watched_run(transactional_db):
    learner, key = _learner_with_session()
    return _finished_run(learner, receipts=2), key


PER_SOCKET = 10


@FUZZ.__class__(FUZZ, max_examples=max(1, EXAMPLES // PER_SOCKET))
@given(batch=st.lists(frames, min_size=PER_SOCKET, max_size=PER_SOCKET))
def test_any_frame_gets_one_answer_keeps_the_socket_open_and_stores_nothing(watched_run, batch):
    run, key = watched_run

    async def exchange() -> None:
        ws = _communicator(run.id, key)
        assert (await ws.connect())[0]
        await ws.receive_from(timeout=5)  # the stored receipts
        for frame in batch:
            await ws.send_to(**frame)
            reply = await ws.receive_from(timeout=5)
            assert 'id="live-error"' in reply or "rc-task-a" in reply
        await ws.send_to(text_data="{}")  # still open and answering
        assert "did not understand" in await ws.receive_from(timeout=5)
        await ws.disconnect()
        assert await sync_to_async(RunEvent.objects.filter(run=run).count)() == 2

    async_to_sync(exchange)()

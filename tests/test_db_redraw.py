"""A redraw that runs on its own (counts, presenter panels) tries again when the database is
busy and gives up with a warning, instead of leaving an error in a task nobody reads."""

from __future__ import annotations

import logging

import pytest
from django.db import OperationalError

from teachlab.core.dbasync import db_redraw
from tests.stack import run_async


def _flaky(failures: int, exc: Exception):
    calls = []

    def render(room_id: int) -> str:
        calls.append(room_id)
        if len(calls) <= failures:
            raise exc
        return f"<p>room {room_id}</p>"

    return render, calls


def test_a_busy_database_is_tried_again_and_the_redraw_goes_out():
    render, calls = _flaky(2, OperationalError("couldn't get a connection after 10.00 sec"))
    assert run_async(db_redraw(render, 7, pause=0)) == "<p>room 7</p>"
    assert calls == [7, 7, 7]


def test_a_database_busy_every_time_gives_up_with_a_warning(caplog):
    render, calls = _flaky(99, OperationalError("couldn't get a connection after 10.00 sec"))
    with caplog.at_level(logging.WARNING, logger="teachlab.core.dbasync"):
        assert run_async(db_redraw(render, 7, tries=3, pause=0)) is None
    assert len(calls) == 3
    assert "given up" in caplog.text


def test_any_other_error_is_not_swallowed():
    render, calls = _flaky(1, KeyError("room"))
    with pytest.raises(KeyError):
        run_async(db_redraw(render, 7, pause=0))
    assert calls == [7]


def test_socket_database_work_does_not_wait_behind_the_loops_default_executor():
    """Django logs every 4xx/5xx answer in the loop's default executor while the request holds
    its pooled connection; db_async waiting there for a connection starved both (the soak's
    two-minute stalls). So db_async has threads of its own: a blocked default executor
    does not hold it up."""
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from teachlab.core.dbasync import db_async

    async def scenario() -> int:
        loop = asyncio.get_running_loop()
        gate = threading.Event()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
        blocked = loop.run_in_executor(None, gate.wait, 30)
        try:
            return await asyncio.wait_for(db_async(lambda: 42)(), timeout=5)
        finally:
            gate.set()
            await blocked

    assert run_async(scenario()) == 42

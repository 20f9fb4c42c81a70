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

"""The run's reader (teachlab/lab/reader.py) draws run-page HTML only when a run page watches:
a run watched only by workshop rooms costs no rendering, and a page that joins later and needs
those batches gets a full redraw instead of frames that were never drawn."""

from __future__ import annotations

import asyncio

import pytest

from teachlab.lab.fragments import Picture
from teachlab.lab.reader import RunReader

pytestmark = pytest.mark.django_db


def on_a_loop_of_its_own(scenario):
    """Run the async scenario on a fresh loop in a thread: a browser test earlier in the
    session leaves Playwright's loop on this thread, where asyncio.run refuses to start."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, scenario()).result()


def _received(seq: int) -> tuple[str, dict[str, str]]:
    fields = {
        "k": "received", "ti": f"task-{seq}", "i": str(seq), "c": "1", "w": "w1@host",
        "r": "0", "a": str(1000.0 + seq), "f": "1000.0", "p": "1000.0", "e": "1030.0",
        "v": "10.0", "n_tasks": "3", "n": f"received={seq},first={seq}",
    }  # fmt: skip
    return f"{seq}-0", fields


class Room:
    wants_batch_html = False


class Page:
    pass


def _reader(*watchers) -> RunReader:
    reader = RunReader("run-1")
    reader.picture = Picture()
    reader.watchers.update(watchers)
    return reader


def test_a_run_watched_only_by_rooms_renders_no_run_page_html():
    reader = _reader(Room())
    batch = reader._take([_received(1), _received(2)])
    assert batch.html is None
    assert [e["seq"] for e in batch.events] == [1, 2]


def test_a_run_page_watching_gets_each_batch_drawn():
    reader = _reader(Room(), Page())
    batch = reader._take([_received(1)])
    assert 'data-seq="1"' in batch.html


def test_a_page_that_needs_undrawn_batches_gets_a_redraw_and_drawn_ones_are_handed_over():
    reader = _reader(Room())
    first = reader._take([_received(1)])
    assert reader.since(first.after) is None  # never drawn: the page must be redrawn
    reader.watchers.add(Page())
    second = reader._take([_received(2)])
    assert reader.since(first.last) == [second]  # drawn since the page came
    assert reader.since(second.last) == []


class StatusWatcher:
    """A run page as the reader sees it: batches, and the outage banner's on and off."""

    def __init__(self) -> None:
        self.statuses: list[bool] = []

    async def reader_deliver(self, batches, *, redraw) -> None:
        pass

    async def reader_status(self, *, down: bool) -> None:
        self.statuses.append(down)


@pytest.mark.django_db(transaction=True)
def test_a_run_quiet_for_longer_than_the_redis_clients_timeout_is_not_reported_as_an_outage():
    """A countdown leaves a run's log quiet for many seconds. The reader's blocking read used
    to outlast redis-py's 5 s socket timeout, and every open page got the "Redis does not
    answer" banner each time."""
    import asyncio

    from teachlab.lab.reader import reader_join, reader_leave

    async def scenario() -> list[bool]:
        page = StatusWatcher()
        await reader_join("quiet-run", page)
        await asyncio.sleep(6.5)
        await reader_leave("quiet-run", page)
        return page.statuses

    assert on_a_loop_of_its_own(scenario) == []

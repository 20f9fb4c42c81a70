"""The run's reader (teachlab/lab/live/reader.py) draws run-page HTML only when a run page watches:
a run watched only by workshop rooms costs no rendering, and a page that joins later and needs
those batches gets a full redraw instead of frames that were never drawn."""

from __future__ import annotations

import asyncio

import pytest

from teachlab.lab.live.fragments import Picture
from teachlab.lab.live.reader import RunReader
from tests.support.loops import on_a_loop_of_its_own

pytestmark = pytest.mark.django_db


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


@pytest.mark.slow  # it has to stay quiet past redis-py's 5 s socket timeout
@pytest.mark.django_db(transaction=True)
def test_a_run_quiet_for_longer_than_the_redis_clients_timeout_is_not_reported_as_an_outage():
    """A countdown leaves a run's log quiet for many seconds. The reader's blocking read used
    to outlast redis-py's 5 s socket timeout, and every open page got the "Redis does not
    answer" banner each time."""
    import asyncio

    from teachlab.lab.live.reader import reader_join, reader_leave

    async def scenario() -> list[bool]:
        page = StatusWatcher()
        await reader_join("quiet-run", page)
        await asyncio.sleep(6.5)
        await reader_leave("quiet-run", page)
        return page.statuses

    assert on_a_loop_of_its_own(scenario) == []


class RecordingPage:
    """A run page: keeps every frame it is sent."""

    def __init__(self) -> None:
        self.frames: list[str] = []

    async def reader_deliver(self, batches, *, redraw) -> None:
        self.frames.append((redraw or "") + "".join(b.html for b in batches))


@pytest.mark.django_db(transaction=True)
def test_fifty_pages_joining_while_the_log_grows_share_one_redraw_and_miss_nothing(monkeypatch):
    """A burst of pages joins a run whose log already holds 200 entries while entries keep
    coming. The backlog is taken in without a frame of its own, the pages share redraws drawn
    off the event loop, and each page ends with every receipt row exactly once."""
    import re

    from teachlab.lab.eventlog.stream import stream_key
    from teachlab.lab.live import fragments
    from teachlab.lab.live.reader import reader_join, reader_leave
    from teachlab.lab.runs.store import app_redis

    run_id = "join-storm"
    key = stream_key(run_id)
    r = app_redis()
    r.delete(key)
    for seq in range(1, 201):
        entry_id, fields = _received(seq)
        r.xadd(key, fields, id=entry_id)
    drawn = []
    real = fragments.render_redraw_events

    def counting(events, **kw):
        drawn.append(len(events))
        return real(events, **kw)

    monkeypatch.setattr(fragments, "render_redraw_events", counting)

    async def scenario():
        pages = [RecordingPage() for _ in range(50)]

        async def keep_appending():
            for seq in range(201, 301):
                entry_id, fields = _received(seq)
                r.xadd(key, fields, id=entry_id)
                await asyncio.sleep(0.005)

        writer = asyncio.create_task(keep_appending())
        readers = await asyncio.gather(*(reader_join(run_id, page) for page in pages))
        await writer
        for _ in range(200):  # until the reader has read the last entry
            if readers[0].last == "300-0":
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.1)
        backlog_frames = [b.html for b in readers[0].batches if b.events[0]["seq"] <= 200]
        for page in pages:
            await reader_leave(run_id, page)
        return pages, backlog_frames

    try:
        pages, backlog_frames = on_a_loop_of_its_own(scenario)
    finally:
        r.delete(key)
    assert backlog_frames and all(html is None for html in backlog_frames)
    assert 1 <= len(drawn) <= 5, drawn  # shared, not one per page
    for page in pages:
        seqs = [
            int(s) for s in re.findall(r'<tr id="rc-[^"]+" data-seq="(\d+)"', "".join(page.frames))
        ]
        assert sorted(seqs) == list(range(1, 301)), (len(seqs), len(set(seqs)))


class TimingPage:
    def __init__(self) -> None:
        self.arrived: list[float] = []

    async def reader_deliver(self, batches, *, redraw) -> None:
        import time

        if batches:
            self.arrived.append(time.monotonic())


@pytest.mark.django_db(transaction=True)
def test_the_reader_gathers_only_at_a_bursts_start_not_while_batches_follow_each_other(
    monkeypatch,
):
    """The gather wait makes a burst's first frame bigger; once batches follow each other,
    what piled up during the last one is the next batch, and waiting would only delay it."""
    import time

    from teachlab.lab.eventlog.stream import stream_key
    from teachlab.lab.live import reader as reader_module
    from teachlab.lab.live.reader import reader_join, reader_leave
    from teachlab.lab.runs.store import app_redis

    monkeypatch.setattr(reader_module, "GATHER_SECONDS", 1.0)
    run_id = "gather-run"
    key = stream_key(run_id)
    r = app_redis()
    r.delete(key)

    async def scenario():
        page = TimingPage()
        reader = await reader_join(run_id, page)
        lags = []
        for seq, busy in ((1, False), (2, True), (3, False)):
            if busy:
                reader.sent_at = time.monotonic()  # a batch went out just now
            else:
                reader.sent_at = 0.0  # quiet for a long time
            entry_id, fields = _received(seq)
            before = time.monotonic()
            r.xadd(key, fields, id=entry_id)
            while len(page.arrived) < seq:
                await asyncio.sleep(0.01)
            lags.append(page.arrived[-1] - before)
        await reader_leave(run_id, page)
        return lags

    try:
        quiet, busy, quiet_again = on_a_loop_of_its_own(scenario)
    finally:
        r.delete(key)
    assert quiet >= 1.0 and quiet_again >= 1.0, (quiet, quiet_again)
    assert busy < 0.5, busy


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("gap", [0.0, 0.04])
def test_within_a_burst_frames_go_at_least_the_gap_apart_and_carry_every_event(monkeypatch, gap):
    """While the log grows faster than frames go out, each frame holds what came in since the
    last one: frames at most one per gap, none lost or doubled. With no gap the same burst
    goes out in more, smaller frames (what the gap is there to prevent)."""
    import time

    from teachlab.lab.eventlog.stream import stream_key
    from teachlab.lab.live import reader as reader_module
    from teachlab.lab.live.reader import reader_join, reader_leave
    from teachlab.lab.runs.store import app_redis

    monkeypatch.setattr(reader_module, "GATHER_SECONDS", 0.0)
    monkeypatch.setattr(reader_module, "MIN_GAP_SECONDS", gap)
    run_id = f"gap-run-{gap}"
    key = stream_key(run_id)
    r = app_redis()
    r.delete(key)

    class Page(TimingPage):
        def __init__(self) -> None:
            super().__init__()
            self.seqs: list[int] = []

        async def reader_deliver(self, batches, *, redraw) -> None:
            await super().reader_deliver(batches, redraw=redraw)
            self.seqs += [e["seq"] for b in batches for e in b.events]

    async def scenario():
        page = Page()
        await reader_join(run_id, page)
        for seq in range(1, 121):  # 120 entries over about 0.6 s
            r.xadd(key, _received(seq)[1], id=f"{seq}-0")
            await asyncio.sleep(0.005)
        deadline = time.monotonic() + 5
        while len(page.seqs) < 120 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await reader_leave(run_id, page)
        return page

    try:
        page = on_a_loop_of_its_own(scenario)
    finally:
        r.delete(key)
    assert page.seqs == list(range(1, 121))
    gaps = [b - a for a, b in zip(page.arrived, page.arrived[1:], strict=False)]
    if gap:
        assert min(gaps) >= gap * 0.9, min(gaps)
    else:
        assert min(gaps) < 0.04 * 0.9, min(gaps)


def test_the_reader_holds_the_run_state_of_what_it_read_and_its_counts_match_the_log():
    """The live reader applies each entry to its RunState: the counters it computes agree with
    the ones the append script wrote on the entries, and its open copies are the run's."""
    reader = _reader(Room())
    reader._take([_received(1), _received(2)])
    assert reader.state.counts()["receipts"] == reader.counts["receipts"] == 2
    assert reader.state.counts()["duplicates"] == reader.counts["duplicates"] == 0
    assert reader.state.pending_by_worker() == {"w1@host": 2}

"""One reader per server process per run: it reads the run's stream from the last id it has,
renders each batch once, and hands it to every watcher in this process (the live run page,
the experiment page, workshop rooms and their presenter screens).

A watcher joins with "everything after the id I saw last" (0 for a fresh page): the reader
answers from what it holds (a full redraw for a fresh page, the missed batches for a
reconnect), then live batches follow in order. Backlog, live and catch-up are one path, and
the reader is the only place that reads the log for this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Protocol

from django.conf import settings

from teachlab.core.dbasync import db_async
from teachlab.lab.eventlog.labevent import LabEvent, RunDone, entry_decode, seq_of
from teachlab.lab.eventlog.runstate import RunState
from teachlab.lab.eventlog.stream import reset_key, stream_key
from teachlab.lab.live.fragments import Picture, render_batch_html
from teachlab.lab.live.redraws import Redraws
from teachlab.lab.runs.reading import run_stored_head
from teachlab.lab.runs.store import async_app_redis

log = logging.getLogger(__name__)

# After the first entries of a burst, wait this long for the rest: every frame costs the server
# and each watcher about the same whatever its size, so fewer, larger frames keep a burst's tail
# short. Within a burst (the previous batch went out less than BUSY_SECONDS ago) the next frame
# goes MIN_GAP_SECONDS after the last one, holding what the log gained meanwhile, or at once
# when drawing and sending took longer than that. A wait after every read (the first design)
# put the reader 50-90 ms behind a restore sweep's 200 copies, while drawing was slow; no wait
# at all sent one frame per one or two events, and with 50 watchers and a browser on two cores
# the frames themselves fell behind (docs/measurements/history/lab.md).
GATHER_SECONDS = settings.LAB_HUB_GATHER_SECONDS
BUSY_SECONDS = 0.05
MIN_GAP_SECONDS = settings.LAB_HUB_MIN_GAP_SECONDS
READ_COUNT = 5000  # entries per XREAD
KEEP_BATCHES = 2000  # batches kept for reconnects; older gaps get a full redraw
IDLE_SECONDS = 30.0  # a reader with no watchers stops after this long
# After the lab's Redis came back, look this long for a sign that it came back empty (the
# workers' appends leave a reset marker when they renumber from the stored history), reading
# in short blocks so a renumbered entry is not waited past.
SUSPECT_SECONDS = 30.0
SUSPECT_BLOCK_MS = 500
# A quiet log's read returns empty after this long and is asked again. It must stay under the
# client's socket timeout (redis-py 8's default is 5 s): a 5 s block timed out as "Redis does
# not answer" whenever a run was quiet for 5 s, and every open page showed the outage banner.
IDLE_BLOCK_MS = 2000
RETRY_SECONDS = 0.5


@dataclass
class Batch:
    """Events read together, in seq order, with their HTML for the lab's run page."""

    after: str  # the id before the first event: a watcher that saw this id needs this batch
    last: str  # id of the last entry in it: what a watcher has seen once it has this batch
    events: list[dict]
    done: dict | None = None  # the run's summary when the batch holds its end marker
    # The run page's frame for it; None when no watcher wanted one as it was read (a
    # workshop room draws its own), and then a page that needs it later gets a redraw.
    html: str | None = ""


class Watcher(Protocol):
    # Optional: `wants_batch_html = False` for a watcher that draws the events itself, so a
    # reader watched only by workshop rooms renders no run-page HTML.
    async def reader_deliver(self, batches: list[Batch], *, redraw: str | None) -> None: ...

    # Optional: told when the lab's Redis stops answering (down=True) and answers again.
    # async def reader_status(self, *, down: bool) -> None: ...


@dataclass
class RunReader:
    run_id: str
    watchers: set = field(default_factory=set)
    batches: list[Batch] = field(default_factory=list)
    last: str = "0-0"
    picture: object = None  # fragments.Picture of every event read so far
    events: list[dict] = field(default_factory=list)  # every event read so far, in order
    state: RunState = field(default_factory=RunState)  # the run's state, of every event read
    counts: dict | None = None
    done: dict | None = None
    prediction: int | None = None
    task: asyncio.Task | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    redraws: Redraws = field(default_factory=Redraws)  # full redraws, once per last id
    joining: int = 0  # run pages joining: batches read meanwhile need their frames
    page_left_at: float = 0.0  # monotonic time a run page last left (it may come back)
    sent_at: float = 0.0  # monotonic time the last batch went out
    stopping: bool = False
    down: bool = False  # the lab's Redis does not answer
    suspect_until: float = 0.0  # monotonic time until which a reset marker is looked for
    reset_seen: str | None = None

    async def start(self) -> None:
        self.picture = Picture()
        await self._load_stored()
        await self._absorb()
        self.task = asyncio.create_task(self.pump(), name=f"lab-reader-{self.run_id}")

    async def _absorb(self) -> None:
        """Take in what the log holds already, without drawing frames: nobody has watched
        it yet, so the first page gets it in its redraw. (Read by the pump instead, a 200-task
        run's backlog became one 200-event frame, drawn in the event loop while the first
        watchers joined: up to 185 ms in which no socket got anything.)"""
        r = async_app_redis()
        key = stream_key(self.run_id)
        try:
            while True:
                found = await r.xread({key: self.last}, count=READ_COUNT)
                if not found:
                    return
                entries = found[0][1]
                self._take(entries, frame=False)
                if len(entries) < READ_COUNT:
                    return
        except Exception:  # noqa: BLE001 - Redis down: the pump reads it later and says so
            log.debug("lab reader %s: backlog not read at start", self.run_id, exc_info=True)

    async def stop(self) -> None:
        self.stopping = True
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task

    async def _load_stored(self) -> None:
        """When the stream no longer starts at seq 1 (trimmed, expired), start from the
        database and read the stream after what it holds."""
        first, stored = await db_async(run_stored_head)(self.run_id)
        self.prediction = stored.get("prediction")
        if first == 1 or not stored["events"]:
            return
        events = stored["events"]
        for event in events:
            self.picture.add(event)
            self.state.apply(LabEvent.from_dict(event))
        self.events = list(events)
        self.counts = events[-1].get("counts")
        self.last = f"{events[-1]['seq']}-0"
        if stored.get("summary"):
            self.done = stored["summary"]

    async def pump(self) -> None:
        r = async_app_redis()
        key = stream_key(self.run_id)
        self.ready.set()
        while True:
            try:
                suspect = self.down or time.monotonic() < self.suspect_until
                if suspect:
                    await self._after_outage(r)
                block = SUSPECT_BLOCK_MS if suspect else IDLE_BLOCK_MS
                found = await r.xread({key: self.last}, count=READ_COUNT, block=block)
                if not found:
                    continue
                entries = found[0][1]
                quiet = time.monotonic() - self.sent_at > BUSY_SECONDS
                wait = (
                    GATHER_SECONDS if quiet else self.sent_at + MIN_GAP_SECONDS - time.monotonic()
                )
                if wait > 0 and len(entries) < READ_COUNT:
                    await asyncio.sleep(wait)
                    more = await r.xread({key: entries[-1][0]}, count=READ_COUNT)
                    if more:
                        entries += more[0][1]
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - Redis hiccup: wait, then read on from self.last
                # redis-py can turn a cancelled read into TimeoutError: a stopping reader stops.
                if self.stopping or asyncio.current_task().cancelling():
                    return
                if not self.down:
                    log.warning(
                        "lab reader %s: the lab's Redis does not answer", self.run_id, exc_info=True
                    )
                    await self._set_down(True)
                await asyncio.sleep(RETRY_SECONDS)
                continue
            batch = self._take(entries)
            for watcher in list(self.watchers):
                try:
                    await watcher.reader_deliver([batch], redraw=None)
                except Exception:  # noqa: BLE001 - one socket gone mid-send must not stop the rest
                    log.debug("lab reader %s: delivery failed", self.run_id, exc_info=True)
            self.sent_at = time.monotonic()

    async def _set_down(self, down: bool) -> None:
        """Tell every watcher that can show it (the run page's banner)."""
        self.down = down
        for watcher in list(self.watchers):
            notify = getattr(watcher, "reader_status", None)
            if notify is None:
                continue
            try:
                await notify(down=down)
            except Exception:  # noqa: BLE001 - one socket gone mid-send must not stop the rest
                log.debug("lab reader %s: status not sent", self.run_id, exc_info=True)

    async def _after_outage(self, r) -> None:
        """Redis answers again (raises while it does not). If it came back without this run's
        log, the workers renumber after what the database stored and leave a reset marker:
        events read after that point were lost with Redis, so go back to it and redraw."""
        if self.down:
            await r.ping()
            self.suspect_until = time.monotonic() + SUSPECT_SECONDS
            await self._set_down(False)
        marker = await r.get(reset_key(self.run_id))
        if marker is None or marker == self.reset_seen:
            return
        self.reset_seen = marker
        floor = int(marker)
        if floor < seq_of(self.last):
            await self._rewind(floor)

    async def _rewind(self, floor: int) -> None:
        log.warning("lab reader %s: log renumbered after %d; redrawing", self.run_id, floor)
        self.events = [e for e in self.events if e["seq"] <= floor]
        self.picture = Picture()
        self.state = RunState()
        for event in self.events:
            self.picture.add(event)
            self.state.apply(LabEvent.from_dict(event))
        self.counts = self.events[-1]["counts"] if self.events else None
        self.done = None
        self.last = f"{floor}-0"
        self.batches.clear()
        self.redraws = Redraws()
        html = self.redraw()
        for watcher in list(self.watchers):
            try:
                await watcher.reader_deliver([], redraw=html)
            except Exception:  # noqa: BLE001
                log.debug("lab reader %s: redraw not sent", self.run_id, exc_info=True)

    def _take(self, entries, *, frame: bool = True) -> Batch:
        events, done = [], None
        for entry_id, fields in entries:
            decoded = entry_decode(self.run_id, entry_id, fields)
            if isinstance(decoded, RunDone):
                done = decoded.summary
                continue
            self.state.apply(decoded)
            event = decoded.as_dict()
            events.append(event)
            self.events.append(event)
            self.picture.add(event)
        if events:
            self.counts = events[-1]["counts"]
        if done is not None:
            self.done = done
        batch = Batch(after=self.last, last=entries[-1][0], events=events, done=done)
        wanted = (
            self.joining
            or any(getattr(w, "wants_batch_html", True) for w in self.watchers)
            # A page that just left (a dropped connection, a reload) reconnects with the last
            # id it saw and should get only what it missed, not a full redraw.
            or time.monotonic() - self.page_left_at < IDLE_SECONDS
        )
        if frame and wanted:
            batch.html = render_batch_html(
                events, done=done, last=batch.last, picture=self.picture, history=self.events
            )
        else:
            batch.html = None
        self.last = batch.last
        self.batches.append(batch)
        if len(self.batches) > KEEP_BATCHES:
            del self.batches[: len(self.batches) - KEEP_BATCHES]
        return batch

    def since(self, after: str) -> list[Batch] | None:
        """The batches a watcher that saw `after` lacks; None when they are no longer held."""
        if after == self.last:
            return []
        for i, batch in enumerate(self.batches):
            if batch.after == after:
                missed = self.batches[i:]
                return None if any(b.html is None for b in missed) else missed
        return None

    def redraw(self) -> str:
        """Every panel drawn from what the reader holds, rendered once per last id."""
        return self.redraws.now(self)

    async def redraw_async(self) -> tuple[str, str]:
        """(last id, html) of a full redraw, drawn in a thread (redraws.py); its last id may
        be behind `self.last`: the caller sends the batches after it."""
        return await self.redraws.in_thread(self)

    async def join(self, watcher: Watcher, *, after: str | None = "0-0") -> None:
        """Give `watcher` everything after `after`, then every batch as it is read (after
        None: only what is read from now on; `self.events` holds what came before)."""
        await self.ready.wait()
        if after is None:
            self.watchers.add(watcher)
            return
        framed = getattr(watcher, "wants_batch_html", True)
        self.joining += framed
        try:
            await self._catch_up(watcher, after)
        finally:
            self.joining -= framed

    async def _catch_up(self, watcher: Watcher, after: str) -> None:
        batches = self.since(after) if _valid(after) and after != "0-0" else None
        if batches is None:
            seen, html = await self.redraw_async()
            await watcher.reader_deliver([], redraw=html)
        else:
            if batches:
                await watcher.reader_deliver(batches, redraw=None)
            seen = batches[-1].last if batches else after
        # Batches read while the backlog was being drawn and sent: hand them over before
        # going live. No await between the last check and joining, so none can fall between.
        while seen != self.last:
            missed = self.since(seen)
            if missed is None:
                seen, html = await self.redraw_async()
                await watcher.reader_deliver([], redraw=html)
                continue
            await watcher.reader_deliver(missed, redraw=None)
            seen = missed[-1].last
        self.watchers.add(watcher)
        notify = getattr(watcher, "reader_status", None)
        if self.down and notify is not None:
            await notify(down=True)


def _valid(after: str) -> bool:
    head, _, tail = after.partition("-")
    return head.isdigit() and tail.isdigit()


_readers: dict[tuple[int, str], RunReader] = {}
_locks: dict[tuple[int, str], asyncio.Lock] = {}
_stoppers: dict[tuple[int, str], asyncio.TimerHandle] = {}


def _key(run_id: str) -> tuple[int, str]:
    # Keyed by event loop too: tests run each case on a loop of its own.
    return (id(asyncio.get_running_loop()), run_id)


async def reader_join(run_id: str, watcher: Watcher, *, after: str | None = "0-0") -> RunReader:
    """Join this process's reader of the run (started on first use)."""
    key = _key(run_id)
    async with _locks.setdefault(key, asyncio.Lock()):
        stopper = _stoppers.pop(key, None)
        if stopper is not None:
            stopper.cancel()
        reader = _readers.get(key)
        if reader is None:
            reader = RunReader(run_id)
            await reader.start()
            _readers[key] = reader
    await reader.join(watcher, after=after)
    return reader


async def reader_leave(run_id: str, watcher: Watcher) -> None:
    """Leave; the reader stops a while after its last watcher left (a reload comes back)."""
    key = _key(run_id)
    reader = _readers.get(key)
    if reader is None:
        return
    reader.watchers.discard(watcher)
    if getattr(watcher, "wants_batch_html", True):
        reader.page_left_at = time.monotonic()
    if not reader.watchers and key not in _stoppers:
        loop = asyncio.get_running_loop()
        _stoppers[key] = loop.call_later(
            IDLE_SECONDS, lambda: asyncio.ensure_future(_stop_idle(key))
        )


async def _stop_idle(key: tuple[int, str]) -> None:
    async with _locks.setdefault(key, asyncio.Lock()):
        _stoppers.pop(key, None)
        reader = _readers.get(key)
        if reader is not None and not reader.watchers:
            _readers.pop(key, None)
            await reader.stop()

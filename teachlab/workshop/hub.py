"""One channel-layer subscription per room per server process, fanned out in memory.

With 300 sockets in a room, a per-socket group would turn each broadcast into 300 Redis
messages and each lab event into 300 more; here a broadcast is one Redis message per
process, and the run's lab events (from the lab's reader of the run in this process) are
gathered for a short moment and pushed as one frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from channels.layers import get_channel_layer

from teachlab.core import hubmembers
from teachlab.core.dbasync import db_async
from teachlab.core.socketnames import CLOSE_REFUSED, room_group
from teachlab.lab.live.reader import reader_join, reader_leave
from teachlab.workshop import fragments
from teachlab.workshop.broadcast import PRESENTER_REFRESH_SECONDS, presenter_part
from teachlab.workshop.models import Room, SharedRun
from teachlab.workshop.predictions import shared_run_finish
from teachlab.workshop.screens import joined_html_for as joined_html

log = logging.getLogger(__name__)

# Lab events arriving within this window go out together: a 200-task run fires hundreds of
# events in a second or two, and one frame per event per phone would swamp the server. Events
# that arrive while a frame is going out to every screen go in the next frame, sent as soon as
# that one is out, so a burst's frames follow each other as fast as the screens take them.
RUN_BATCH_SECONDS = 0.03


class Member(Protocol):
    is_presenter: bool
    seat_id: int | None  # a participant's seat; None on a presenter's socket
    is_screen: bool  # the projector view: it gets the message's "screen" rendering

    async def hub_push(
        self, html: str, *, close: bool = False, code: int | None = None
    ) -> None: ...


class RoomHub:
    def __init__(self, room_id: int) -> None:
        self.room_id = room_id
        self.group = room_group(room_id)
        self.members: set[Member] = set()
        self.layer = get_channel_layer()
        self.channel: str | None = None
        self.task: asyncio.Task | None = None
        self.run_id: str | None = None
        self.feed = LabFeed(self)
        self.pending: list[dict] = []  # lab events waiting for the next frame
        self.flusher: asyncio.Task | None = None
        self.catching: list[dict] | None = None  # live events seen while catching up
        self.seqs: set[int] = set()  # event numbers the screens already hold
        self.catch_up: asyncio.Task | None = None
        self.refreshing: dict[str, asyncio.Task] = {}  # presenter parts to redraw soon
        self.stopping = False

    async def start(self, run_id: str = "") -> None:
        self.channel = await self.layer.new_channel()
        await self.layer.group_add(self.group, self.channel)
        if run_id:
            await self.follow_run(run_id)
        self.task = asyncio.create_task(self.pump(), name=f"workshop-hub-{self.room_id}")

    async def stop(self) -> None:
        self.stopping = True
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self.task, timeout=2)
        for task in (self.flusher, self.catch_up, *self.refreshing.values()):
            if task is not None:
                task.cancel()
        if self.channel is not None:
            await self.layer.group_discard(self.group, self.channel)
        if self.run_id:
            await reader_leave(self.run_id, self.feed)

    async def follow_run(self, run_id: str) -> None:
        """Watch the run through this process's lab reader (the room already checked who may
        see it): the run section is drawn from what the reader holds, then live batches."""
        if run_id == self.run_id:
            return
        if self.run_id:
            await reader_leave(self.run_id, self.feed)
        self.run_id = run_id
        self.catching, self.seqs, self.pending = [], set(), []
        reader = await reader_join(run_id, self.feed, after=None)
        # No await since joining: these are exactly the events before the first live batch.
        self.catch_up = asyncio.create_task(self.catch_up_with(run_id, list(reader.events)))

    async def catch_up_with(self, run_id: str, events: list[dict]) -> None:
        """Redraw the run section from the reader's events, then send again what came live
        meanwhile (the redraw replaced it on the screens)."""
        html, stored = await db_async(live_snapshot)(
            room_id=self.room_id, run_id=run_id, events=events
        )
        await self.flush()
        caught, self.catching, self.seqs = self.catching or [], None, set(stored)
        await self.fan_out(participant=html, presenter=html, screen=html)
        for message in caught:
            self.take_event(message)

    async def pump(self) -> None:
        while True:
            try:
                message = await self.layer.receive(self.channel)
                await self.dispatch(message)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - one bad message must not silence the room
                # redis-py can turn a cancelled read into TimeoutError: a stopping hub stops.
                if self.stopping or asyncio.current_task().cancelling():
                    return
                log.exception("workshop hub %s: message dropped", self.room_id)
                await asyncio.sleep(0.2)  # a Redis hiccup: do not spin

    async def dispatch(self, message: dict) -> None:
        kind = message.get("type")
        if kind == "room.push" and message.get("seat_id"):
            await self.fan_out_seat(
                int(message["seat_id"]),
                participant=message.get("participant") or "",
                presenter=message.get("presenter") or "",
                close=bool(message.get("close")),
            )
        elif kind == "room.push":
            await self.flush()  # run events first, so an outcome never overtakes its receipts
            if message.get("run_id"):
                await self.follow_run(message["run_id"])
            await self.fan_out(
                participant=message.get("participant") or "",
                presenter=message.get("presenter") or "",
                screen=message.get("screen") or "",
                close=bool(message.get("close")),
            )
            if message.get("personal"):
                await self.push_personal(list(message["personal"]))
        elif kind == "room.refresh" and message.get("part"):
            self.refresh_soon(str(message["part"]))
        elif kind == "room.follow" and message.get("run_id"):
            await self.follow_run(str(message["run_id"]))
        elif kind == "lab.event":
            if self.catching is not None:
                self.catching.append(message)
            self.take_event(message)
        elif kind == "lab.done":
            # The last receipts, then the counters as a finished run shows them (the
            # amplification waits for the end), then the stored outcome (run_done's push).
            await self.flush()
            if isinstance(message.get("summary"), dict):
                html = fragments.run_final_counters(message["summary"])
                await self.fan_out(participant=html, presenter=html, screen=html)
            await db_async(run_done)(
                room_id=self.room_id,
                run_id=str(message.get("run") or ""),
                summary=message.get("summary"),
            )

    def refresh_soon(self, part: str) -> None:
        """Redraw a presenter-only part for this process's presenters, once for a burst of
        asks (broadcast.send_refresh); a process with no presenter draws nothing."""
        if not any(m.is_presenter or (part == "seats" and m.is_screen) for m in self.members):
            return
        task = self.refreshing.get(part)
        if task is None or task.done():
            self.refreshing[part] = asyncio.create_task(self.refresh_later(part))

    async def refresh_later(self, part: str) -> None:
        await asyncio.sleep(PRESENTER_REFRESH_SECONDS)
        # Let go of the slot before reading, so a change stored after the read asks again.
        self.refreshing.pop(part, None)
        html = await db_async(presenter_part)(room_id=self.room_id, part=part)
        screen = ""
        if part == "seats" and any(m.is_screen for m in self.members):
            screen = await db_async(joined_html)(room_id=self.room_id)  # the lobby's names
        for member in list(self.members):
            out = html if member.is_presenter else screen if member.is_screen else ""
            if not out:
                continue
            try:
                await member.hub_push(out)
            except Exception:  # noqa: BLE001 - a socket that went away mid-send
                log.debug("workshop hub %s: push failed", self.room_id, exc_info=True)

    def take_event(self, message: dict) -> None:
        seq = (message.get("event") or {}).get("seq") or 0
        event = message.get("event")
        if not isinstance(event, dict) or seq in self.seqs:
            return  # the screens already hold it (a redraw or an earlier push)
        if seq:
            self.seqs.add(seq)
        self.pending.append(event)
        if self.flusher is None or self.flusher.done():
            self.flusher = asyncio.create_task(self.flush_later())

    async def flush_later(self) -> None:
        await asyncio.sleep(RUN_BATCH_SECONDS)
        # Not one flush: events taken during the fan-out found this task still running and
        # started no other, so they would wait for the next event, seconds away at a run's end.
        while self.pending:
            await self.flush()

    async def flush(self) -> None:
        events, self.pending = self.pending, []
        if events:
            for html in fragments.run_event_frames(events):
                await self.fan_out(participant=html, presenter=html, screen=html)

    async def fan_out(
        self, *, participant: str, presenter: str, screen: str = "", close: bool = False
    ) -> None:
        for member in list(self.members):
            html = presenter if member.is_presenter else screen if member.is_screen else participant
            if html or close:
                try:
                    await member.hub_push(html, close=close)
                except Exception:  # noqa: BLE001 - a socket that went away mid-send
                    log.debug("workshop hub %s: push failed", self.room_id, exc_info=True)

    async def fan_out_seat(
        self, seat_id: int, *, participant: str, presenter: str, close: bool = False
    ) -> None:
        """`participant` to one seat's sockets only (closing them when asked, with the
        refusal code so the browser does not reconnect); `presenter` to every presenter."""
        for member in list(self.members):
            try:
                if member.is_presenter:
                    if presenter:
                        await member.hub_push(presenter)
                elif member.seat_id == seat_id:
                    await member.hub_push(participant, close=close, code=CLOSE_REFUSED)
            except Exception:  # noqa: BLE001 - a socket that went away mid-send
                log.debug("workshop hub %s: push failed", self.room_id, exc_info=True)

    async def push_personal(self, kinds: list[str]) -> None:
        """Each connected seat's own parts after a broadcast (its vote's verdict, its place),
        rendered in one database hop for the seats of this process."""
        seats = {m.seat_id for m in self.members if not m.is_presenter and m.seat_id}
        if not seats:
            return
        by_seat = await db_async(fragments.personal_html)(
            room_id=self.room_id, kinds=kinds, seat_ids=seats
        )
        for member in list(self.members):
            html = by_seat.get(member.seat_id) if not member.is_presenter else ""
            if html:
                try:
                    await member.hub_push(html)
                except Exception:  # noqa: BLE001 - a socket that went away mid-send
                    log.debug("workshop hub %s: push failed", self.room_id, exc_info=True)


class LabFeed:
    """The room hub as a watcher of the lab's reader for its run (teachlab/lab/live/reader.py)."""

    wants_batch_html = False  # the room draws its own frames (fragments.run_event_frames)

    def __init__(self, hub: RoomHub) -> None:
        self.hub = hub

    async def reader_deliver(self, batches, *, redraw: str | None) -> None:
        for batch in batches:
            for event in batch.events:
                await self.hub.dispatch({"type": "lab.event", "event": event})
            if batch.done is not None:
                await self.hub.dispatch(
                    {"type": "lab.done", "run": self.hub.run_id, "summary": batch.done}
                )


def live_snapshot(
    *, room_id: int, run_id: str, events: list[dict] | None = None
) -> tuple[str, list[int]]:
    """The room's live run section from the lab reader's events (or the stored ones), and
    the numbers of those events."""
    room = Room.objects.get(pk=room_id)
    ctx = fragments.room_context(room)
    ctx.update(fragments.lab_picture(run_id, events=events))  # even before the room has its id
    return fragments.render_parts(fragments.PARTICIPANT, ["live"], ctx), ctx.get("seqs", [])


def run_done(*, room_id: int, run_id: str, summary: dict | None) -> None:
    """The lab says the room's run settled: store the observation and show the outcome."""
    shared = SharedRun.objects.filter(room_id=room_id, run_id=run_id).select_related("room")
    for item in shared:
        shared_run_finish(shared=item, summary=summary)


_hubs: dict[tuple[int, int], RoomHub] = {}


async def hub_join(room_id: int, member: Member, *, run_id: str = "") -> RoomHub:
    key = (id(asyncio.get_running_loop()), room_id)
    hub = _hubs.get(key)
    if hub is None:
        hub = _hubs[key] = RoomHub(room_id)
        hub.members.add(member)
        try:
            await hub.start(run_id=run_id)
        except Exception:
            _hubs.pop(key, None)
            raise
    else:
        hub.members.add(member)
    return hub


async def hub_leave(room_id: int, member: Member) -> None:
    await hubmembers.leave(_hubs, (id(asyncio.get_running_loop()), room_id), member)

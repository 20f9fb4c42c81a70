"""The live run socket: joins one run's group, only for that run's owner, and forwards the HTML
the worker rendered once. On connect it first sends everything stored so far (the backlog), so a
page opened mid-run or reconnected is complete; events already in the backlog are not sent twice.
"""

from __future__ import annotations

import asyncio
import json
import time

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string

from lessons.learners import learner_for_scope
from teachlab.lab.errors import LabError
from teachlab.lab.fragments import TEMPLATE, picture_from, render_event_html
from teachlab.lab.hub import hub_join, hub_leave

# Close codes in the 4000 range are ours; htmx's ws extension does not retry them.
CLOSE_NOT_YOURS = 4403
DONE_TEXT = {
    "done": "Run finished: every copy has settled.",
    "timed_out": "Run timed out with copies still unsettled (a crashed worker holds them?).",
    "failed": "The run failed while publishing; see your runs list.",
}
RESYNC_EVERY = 3.0  # seconds between two redraws a socket may ask for
FILL_DELAY = 1.0  # seconds; a worker stores its events within a few hundred ms of publishing


@database_sync_to_async
def owned_run(scope: dict, run_id: str):
    from teachlab.lab.runs import run_for_learner

    learner = learner_for_scope(scope)
    if learner is None:
        return None
    return run_for_learner(run_id, learner)


@database_sync_to_async
def _backlog_render(run) -> tuple[str, frozenset[int]]:
    from teachlab.lab.runs import run_events, run_summary

    events = run_events(run)
    context = {
        "picture": picture_from(events),
        "counts": run_summary(run),
        "prediction": run.prediction,
        "final": run.status != "running",
    }
    return render_to_string(f"{TEMPLATE}#backlog", context), frozenset(e["seq"] for e in events)


# A class of 50 opening the same run at once would otherwise render the same backlog 50 times
# in Channels' one database thread, delaying everyone's live events by seconds. A backlog a
# little older than the join is fine: the gap check below fetches what it lacks.
_backlogs: dict[str, tuple[float, str, frozenset[int]]] = {}
_backlog_locks: dict[str, asyncio.Lock] = {}
BACKLOG_TTL = 2.0  # seconds


async def backlog(run, *, fresh: bool = False) -> tuple[str, frozenset[int]]:
    """Every panel redrawn from the stored events, and the seqs it covers."""
    lock = _backlog_locks.setdefault(run.id, asyncio.Lock())
    async with lock:
        cached = _backlogs.get(run.id)
        if cached and not fresh and time.monotonic() - cached[0] < BACKLOG_TTL:
            return cached[1], cached[2]
        html, seqs = await _backlog_render(run)
        now = time.monotonic()
        _backlogs[run.id] = (now, html, seqs)
        for key, (at, _, _) in list(_backlogs.items()):
            if now - at > BACKLOG_TTL:
                _backlogs.pop(key, None)
                _backlog_locks.pop(key, None)
        return html, seqs


@database_sync_to_async
def seq_high_water(run_id: str) -> int:
    """The last seq handed out for this run (events are numbered in Redis before either being
    published or stored)."""
    from teachlab.lab.store import app_redis

    return int(app_redis().get(f"lab:run:{run_id}:seq") or 0)


@database_sync_to_async
def stored_events(run, seqs: set[int]) -> list[dict]:
    from teachlab.lab.runs import run_events

    low = min(seqs) - 1 if seqs else 0
    return [e for e in run_events(run, after_seq=low) if e["seq"] in seqs]


@database_sync_to_async
def broker_look(lane_name: str):
    from teachlab.lab.broker import broker_snapshot

    try:
        return broker_snapshot(lane_name)
    except Exception:  # noqa: BLE001 - a broker away must not break the page
        return None


BROKER_ROWS = 12  # the oldest entries, closest to being restored; the rest are counted


def broker_html(snapshot: dict | None, run_tag: str) -> str:
    entries = (snapshot or {}).get("unacked") or []
    mine = [e for e in entries if e.get("run_tag") == run_tag]
    mine.sort(key=lambda e: -(e.get("age") or 0))
    restored = [e for e in (snapshot or {}).get("restored") or [] if e.get("run_tag") == run_tag]
    context = {
        "oob": True,
        "snapshot": snapshot,
        "mine": mine[:BROKER_ROWS],
        "mine_count": len(mine),
        "more": max(0, len(mine) - BROKER_ROWS),
        "others": len(entries) - len(mine),
        "restored": restored[:BROKER_ROWS],
    }
    return render_to_string(f"{TEMPLATE}#broker", context)


# Every watcher of a run gets the same broker panel: render it once per snapshot.
_broker_frames: dict[str, tuple[object, str]] = {}


def broker_frame(snapshot: dict | None, run_tag: str) -> str:
    stamp = (snapshot or {}).get("at")
    cached = _broker_frames.get(run_tag)
    if cached is not None and stamp is not None and cached[0] == stamp:
        return cached[1]
    html = broker_html(snapshot, run_tag)
    if len(_broker_frames) > 1000:
        _broker_frames.clear()
    _broker_frames[run_tag] = (stamp, html)
    return html


class RunConsumer(AsyncWebsocketConsumer):
    """Group messages reach this socket through the process's hub for the group (hub.py),
    not through its own channel: see there for why."""

    groups: list[str] = []

    async def connect(self) -> None:
        self.run = None
        self.joined: list[str] = []
        self.sent: set[int] = set()
        self.ready = False
        self.early: list[dict] = []  # hub messages that came while the backlog was read
        self.fill_task: asyncio.Future | None = None
        run_id = self.scope["url_route"]["kwargs"]["run_id"]
        run = await owned_run(self.scope, run_id)
        if run is None:
            # Missing and not-yours look the same: the handshake is refused.
            await self.close(code=CLOSE_NOT_YOURS)
            return
        self.run = run
        # Join before reading the backlog: an event stored meanwhile arrives both ways and
        # the seq check drops the second copy; none can fall in between.
        await self._join(run.group)
        self.lane_tag = ""
        if run.status == "running":
            self.lane_tag = await self._broker_join(run)
        await self.accept()
        high = await seq_high_water(run.id)
        html, seqs = await backlog(run)
        self.sent = set(seqs)
        if self.lane_tag:
            # One look now, so the panel is not empty until the monitor's next snapshot.
            html += broker_html(await broker_look(run.lane), self.lane_tag)
        await self.send(text_data=html + self._status("Live: connected."))
        self.ready = True
        early, self.early = self.early, []
        await self.hub_deliver(early)
        # Workers publish an event before they store it. One published just before we joined
        # but not yet stored when we read the backlog would be lost: fetch such gaps later.
        self.gap = set(range(1, high + 1)) - seqs
        if self.gap:
            self.fill_task = asyncio.ensure_future(self._fill())

    async def _fill(self) -> None:
        for attempt in range(1, 4):
            await asyncio.sleep(FILL_DELAY * attempt)
            gap = self.gap - self.sent
            if not gap:
                return
            found = await stored_events(self.run, gap)
            for event in found:
                if event["seq"] not in self.sent:
                    self.sent.add(event["seq"])
                    await self.send(text_data=render_event_html(event))
            self.gap = gap - {e["seq"] for e in found}

    async def _join(self, group: str) -> None:
        await hub_join(group, self)
        self.joined.append(group)

    async def _broker_join(self, run) -> str:
        from teachlab.lab.broker import run_tag
        from teachlab.lab.lanes import lane_get

        try:
            lane = await database_sync_to_async(lane_get)(run.lane)
        except LabError:  # a lane taken out of the configuration since the run
            return ""
        if lane.kind != "redis":
            return ""
        await self._join(f"lab.broker.{lane.name}")
        return run_tag(run.id)

    async def disconnect(self, code: int) -> None:
        if self.fill_task is not None:
            self.fill_task.cancel()
        for group in self.joined:
            await hub_leave(group, self)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        """Watchers only listen; the one request understood is a resync. Anything else gets
        an error to this client alone and changes nothing."""
        try:
            frame = json.loads(text_data or "")
        except (TypeError, ValueError, RecursionError):  # deeply nested JSON recurses
            frame = None
        if isinstance(frame, dict) and frame.get("action") == "resync":
            # A resync redraws the whole run from the database: one per socket every few
            # seconds is plenty for a page that lost track, and a script cannot hammer it.
            now = time.monotonic()
            if now - getattr(self, "last_resync", -RESYNC_EVERY) < RESYNC_EVERY:
                await self.send(
                    text_data=render_to_string(
                        f"{TEMPLATE}#error",
                        {
                            "error_text": "Resync asked too often; the page is redrawn at most "
                            f"once every {RESYNC_EVERY:g} s."
                        },
                    )
                )
                return
            self.last_resync = now
            html, seqs = await backlog(self.run, fresh=True)
            self.sent |= seqs
            await self.send(text_data=html)
            return
        await self.send(
            text_data=render_to_string(
                f"{TEMPLATE}#error",
                {"error_text": "The server ignored a message it did not understand."},
            )
        )

    # --- group messages, handed over by the hub ---------------------------------------------

    async def hub_deliver(self, messages: list[dict]) -> None:
        """A batch of group messages in arrival order, sent to the browser as one frame."""
        if not self.ready:
            self.early.extend(messages)
            return
        parts = [self._html(message) for message in messages]
        html = "".join(part for part in parts if part)
        if html:
            await self.send(text_data=html)

    def _html(self, message: dict) -> str:
        kind = message.get("type")
        if kind == "lab.event":
            event = message.get("event") or {}
            if not self._fresh(event):
                return ""
            html = message.get("html")
            return html if html is not None else render_event_html(event)
        if kind == "lab.events":
            events = message.get("events") or []
            fresh = [e for e in events if self._fresh(e)]
            html = message.get("html")
            if html is not None and len(fresh) == len(events):
                return html
            return "".join(render_event_html(e) for e in fresh)
        if kind == "lab.done":
            return self._done_html(message.get("summary") or {})
        if kind == "lab.broker" and self.lane_tag:
            return broker_frame(message.get("snapshot"), self.lane_tag)
        return ""

    def _fresh(self, event: dict) -> bool:
        seq = event.get("seq")
        if seq is None:
            return True
        if seq in self.sent:
            return False
        self.sent.add(seq)
        return True

    def _done_html(self, summary: dict) -> str:
        context = {"oob": True, "counts": summary, "final": True}
        context["prediction"] = summary.get("prediction", self.run.prediction)
        html = render_to_string(f"{TEMPLATE}#counters", context)
        html += render_to_string(f"{TEMPLATE}#prediction", context)
        return html + self._status(DONE_TEXT.get(summary.get("status"), "The run is over."))

    def _status(self, text: str) -> str:
        return render_to_string(f"{TEMPLATE}#status", {"status_text": text})

"""The live run socket: for the run's owner only, it joins this process's reader of the run
(reader.py) with "everything after the id this page saw last" and forwards the HTML the reader
rendered once per batch. A finished run replays over the same socket, through the same
renderer, at 1x or 10x.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string

from lessons.learners import learner_for_scope
from teachlab import ratelimits
from teachlab.dbasync import HubFed, NoHopDispatch, db_async
from teachlab.lab.errors import LabError
from teachlab.lab.fragments import TEMPLATE
from teachlab.lab.hub import hub_join, hub_leave
from teachlab.lab.reader import reader_join, reader_leave
from teachlab.socketframes import FrameSizeCapped
from teachlab.socketnames import CLOSE_REFUSED, PING, PONG, WORKERS_GROUP, broker_group

# Close codes in the 4000 range are ours; htmx's ws extension does not retry them.
RESYNC_EVERY = 3  # seconds between two redraws a socket may ask for
REPLAY_SPEEDS = {1.0, 10.0}
REPLAY_TICK = 0.05  # seconds of replay time gathered into one frame


@db_async
def owned_run(scope: dict, run_id: str):
    from teachlab.lab.reading import run_for_learner

    learner = learner_for_scope(scope)
    if learner is None:
        return None
    return run_for_learner(run_id, learner)


@db_async
def stored_events(run) -> list[dict]:
    from teachlab.lab.reading import run_events

    return run_events(run)


@db_async
def stored_summary(run) -> dict:
    from teachlab.lab.reading import run_summary

    return run_summary(run)


BROKER_LOOK_FRESH = 0.5  # seconds a connect-time look serves other sockets (the monitor's pace)
_broker_looks: dict[str, tuple[float, dict | None]] = {}


def _broker_look_sync(lane_name: str):
    from teachlab.lab.broker import broker_snapshot

    cached = _broker_looks.get(lane_name)
    if cached is not None and time.monotonic() - cached[0] < BROKER_LOOK_FRESH:
        return cached[1]
    try:
        snapshot = broker_snapshot(lane_name)
    except Exception:  # noqa: BLE001 - a broker away must not break the page
        snapshot = None
    _broker_looks[lane_name] = (time.monotonic(), snapshot)
    return snapshot


@db_async
def broker_look(lane_name: str):
    """One look at the lane's broker for a page that just connected. A class opening the same
    run at once shares one look per half second: each look reads and decodes up to 300
    messages, and 300 sockets each taking their own kept a server core busy for seconds."""
    return _broker_look_sync(lane_name)


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


def holders_rows(workers: list[dict] | None, *, lane: str, task_ids: frozenset) -> tuple:
    """Per worker of the run's lane: (name, alive, how many copies of this run's tasks it holds
    in memory), from the registry each worker writes twice a second (workers.py)."""
    rows = []
    for w in workers or []:
        if w.get("lane") != lane:
            continue
        mine = sum(1 for task_id in w.get("held_ids") or () if task_id in task_ids)
        rows.append((str(w.get("name", "")), bool(w.get("alive")), mine))
    return tuple(sorted(rows))


def holders_html(rows: tuple, *, unacked: int | None) -> str:
    context = {
        "oob": True,
        "holders": [{"name": n, "alive": a, "mine": m} for n, a, m in rows],
        "held_total": sum(m for _n, _a, m in rows),
        "unacked": unacked,
    }
    return render_to_string(f"{TEMPLATE}#holders", context)


# Every watcher of a run gets the same holders panel: render it once per change.
_holder_frames: dict[str, tuple[object, str]] = {}


def holders_frame(run_id: str, rows: tuple, *, unacked: int | None) -> str:
    key = (rows, unacked)
    cached = _holder_frames.get(run_id)
    if cached is not None and cached[0] == key:
        return cached[1]
    html = holders_html(rows, unacked=unacked)
    if len(_holder_frames) > 1000:
        _holder_frames.clear()
    _holder_frames[run_id] = (key, html)
    return html


_workers_looks: list[tuple[float, list | None]] = []


@db_async
def workers_look():
    """The worker registry for a page that just connected, shared for half a second like the
    broker look (it asks the OS about every local worker process)."""
    from teachlab.lab.workers import workers_list

    if _workers_looks and time.monotonic() - _workers_looks[0][0] < BROKER_LOOK_FRESH:
        return _workers_looks[0][1]
    try:
        found = workers_list()
    except Exception:  # noqa: BLE001 - the registry away must not break the page
        found = None
    _workers_looks[:] = [(time.monotonic(), found)]
    return found


def unacked_mine(snapshot: dict | None, run_tag: str) -> int | None:
    if not snapshot or not snapshot.get("supported", True):
        return None
    return sum(1 for e in snapshot.get("unacked") or [] if e.get("run_tag") == run_tag)


# Every watcher of a run gets the same broker panel: render it once per snapshot. Keyed by
# snapshot too: while a class connects, connect-time looks and the monitor's snapshots
# alternate, and one slot per run re-rendered the panel for nearly every socket.
_broker_frames: dict[tuple[str, object], str] = {}


def broker_frame(snapshot: dict | None, run_tag: str) -> str:
    stamp = (snapshot or {}).get("at")
    if stamp is None:
        return broker_html(snapshot, run_tag)
    html = _broker_frames.get((run_tag, stamp))
    if html is None:
        html = broker_html(snapshot, run_tag)
        if len(_broker_frames) > 256:
            _broker_frames.clear()
        _broker_frames[(run_tag, stamp)] = html
    return html


def _query(scope: dict) -> dict[str, str]:
    raw = parse_qs((scope.get("query_string") or b"").decode("latin-1"))
    return {key: values[-1] for key, values in raw.items() if values}


class RunConsumer(FrameSizeCapped, HubFed, NoHopDispatch, AsyncWebsocketConsumer):
    """Lab events come from the run's reader (reader.py); broker snapshots from the process's
    hub for the lane's group (hub.py)."""

    groups: list[str] = []

    async def connect(self) -> None:
        self.run = None
        self.joined: list[str] = []
        self.following = False
        self.replay_task: asyncio.Task | None = None
        run_id = self.scope["url_route"]["kwargs"]["run_id"]
        run = await owned_run(self.scope, run_id)
        if run is None:
            # Missing and not-yours look the same: the handshake is refused.
            await self.close(code=CLOSE_REFUSED)
            return
        self.run = run
        query = _query(self.scope)
        await self.accept()
        if "replay" in query:
            self.replay_task = asyncio.ensure_future(self.replay(query.get("replay", "")))
            return
        self.lane_tag = ""
        self.unacked: int | None = None
        self.loss_html = ""  # who died holding this run's deliveries (losses.py)
        self.workers_rows: tuple = ()
        self.task_set = frozenset(run.task_ids or ())
        if run.status == "running":
            # One look now at the broker and the workers, so the panels are not empty until
            # the monitor's next snapshots; then the hub hands those over as they come.
            first = ""
            self.lane_tag = await self._broker_join(run)
            if self.lane_tag:
                snapshot = await broker_look(run.lane)
                self.unacked = unacked_mine(snapshot, self.lane_tag)
                first += broker_frame(snapshot, self.lane_tag)
            await self._join(WORKERS_GROUP)
            self.workers_rows = holders_rows(
                await workers_look(), lane=run.lane, task_ids=self.task_set
            )
            first += holders_frame(run.id, self.workers_rows, unacked=self.unacked)
            await self.send(text_data=first)
        self.reader = await reader_join(run.id, self, after=query.get("after", "0-0"))
        self.following = True

    async def reader_status(self, *, down: bool) -> None:
        """The banner that says the lab's Redis is away (the reader is retrying meanwhile)."""
        html = render_to_string(f"{TEMPLATE}#redis_banner", {"oob": True, "down": down})
        await self.send(text_data=html)

    async def reader_deliver(self, batches, *, redraw: str | None) -> None:
        """The reader's batches (and a full redraw when this page is new or too far behind),
        as one frame."""
        html = (redraw or "") + "".join(batch.html for batch in batches)
        if html:
            await self.send(text_data=html)

    async def replay(self, speed_text: str) -> None:
        """The stored events again at 1x or 10x, drawn by the reader's batch renderer."""
        from teachlab.lab.fragments import render_batch_html, render_done_html

        try:
            speed = float(speed_text)
        except ValueError:
            speed = 0.0
        if speed not in REPLAY_SPEEDS:
            await self._error("Replay speed must be 1 or 10.")
            return
        events = await stored_events(self.run)
        reset = {
            "counts": {"tasks": len(self.run.task_ids)},
            "prediction": self.run.prediction,
            "status_text": f"Replaying at {speed:g}×…",
        }
        await self.send(text_data=render_to_string(f"{TEMPLATE}#replay_reset", reset))
        started = time.monotonic()
        i = 0
        while i < len(events):
            due = (events[i].get("t") or 0) / speed
            wait = due - (time.monotonic() - started)
            if wait > 0:
                await asyncio.sleep(wait)
            now = (time.monotonic() - started + REPLAY_TICK) * speed
            batch = []
            while i < len(events) and (events[i].get("t") or 0) <= now:
                batch.append(events[i])
                i += 1
            await self.send(text_data=render_batch_html(batch))
        # The stored summary (with per-task numbers) brings back the explanation the reset
        # took away: the counters and the text agree all along (issue 29).
        summary = {**(await stored_summary(self.run)), "status": "replayed"}
        await self.send(text_data=render_done_html(summary, events=events))

    async def _join(self, group: str) -> None:
        await hub_join(group, self)
        self.joined.append(group)

    async def _broker_join(self, run) -> str:
        from teachlab.lab.broker import run_tag
        from teachlab.lab.lanes import lane_get

        try:
            lane = await db_async(lane_get)(run.lane)
        except LabError:  # a lane taken out of the configuration since the run
            return ""
        if lane.kind != "redis":
            return ""
        await self._join(broker_group(lane.name))
        return run_tag(run.id)

    async def disconnect(self, code: int) -> None:
        if self.replay_task is not None:
            self.replay_task.cancel()
        if self.following:
            await reader_leave(self.run.id, self)
        for group in self.joined:
            await hub_leave(group, self)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        """Watchers only listen; the one request understood is a resync. Anything else gets
        an error to this client alone and changes nothing. The page's heartbeat ping is
        answered, so the page notices a silent cut (static/js/ws-reconnect.js)."""
        if text_data == PING:
            await self.send(text_data=PONG)
            return
        try:
            frame = json.loads(text_data or "")
        except (TypeError, ValueError, RecursionError):  # deeply nested JSON recurses
            frame = None
        if isinstance(frame, dict) and frame.get("action") == "resync" and self.following:
            # A resync redraws the whole run: one per socket every few seconds is plenty for
            # a page that lost track, and a script cannot hammer it (teachlab/ratelimits.py).
            if not hasattr(self, "resync_key"):
                self.resync_key = secrets.token_hex(8)
            budget = ratelimits.Budget("lab-resync", 1, RESYNC_EVERY)
            if await ratelimits.aspend_all([(budget, (self.resync_key,))]):
                await self._error(
                    "Resync asked too often; the page is redrawn at most "
                    f"once every {RESYNC_EVERY:g} s."
                )
                return
            await self.send(text_data=self.reader.redraw())
            return
        await self._error("The server ignored a message it did not understand.")

    async def _error(self, text: str) -> None:
        await self.send(text_data=render_to_string(f"{TEMPLATE}#error", {"error_text": text}))

    # --- broker snapshots, handed over by the hub ---------------------------------------------

    async def hub_deliver(self, messages: list[dict]) -> None:
        """Broker snapshots (twice a second) and the workers list (once a second): the broker
        panel, and the holders panel whenever what it shows changed."""
        html = ""
        holders_before = (self.workers_rows, self.unacked)
        snapshot = None
        workers = None
        for m in messages:
            if m.get("type") == "lab.broker" and self.lane_tag:
                snapshot = m.get("snapshot")
                self.unacked = unacked_mine(snapshot, self.lane_tag)
            elif m.get("type") == "lab.workers":
                workers = m.get("workers") or []
                self.workers_rows = holders_rows(
                    m.get("workers"), lane=self.run.lane, task_ids=self.task_set
                )
        if snapshot is not None:  # only the newest snapshot of a burst is worth drawing
            html += broker_frame(snapshot, self.lane_tag)
        if (self.workers_rows, self.unacked) != holders_before:
            html += holders_frame(self.run.id, self.workers_rows, unacked=self.unacked)
        if workers is not None and self.following:
            loss = loss_frame(self.run, self.reader, workers)
            if loss != self.loss_html:
                self.loss_html = loss
                html += loss
        if html:
            await self.send(text_data=html)


# Every watcher of a run in this process sees the same losses: worked out once per worker list.
_loss_frames: dict[str, tuple[object, str]] = {}


def loss_frame(run, reader, workers: list[dict]) -> str:
    from teachlab.lab.losses import worker_losses

    stamp = (
        reader.last,
        tuple((w.get("hostname"), w.get("alive"), w.get("started_at")) for w in workers),
    )
    cached = _loss_frames.get(run.id)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    losses = worker_losses(reader.state, workers)
    context = {"oob": True, "losses": losses, "vt": run.visibility_timeout}
    html = render_to_string(f"{TEMPLATE}#worker_loss", context)
    if len(_loss_frames) > 1000:
        _loss_frames.clear()
    _loss_frames[run.id] = (stamp, html)
    return html

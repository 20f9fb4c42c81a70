"""The live run socket: for the run's owner only, it joins this process's reader of the run
(reader.py) with "everything after the id this page saw last" and forwards the HTML the reader
rendered once per batch; the broker and worker panels come drawn from panels.py. A finished
run replays over the same socket, through the same renderer, at 1x or 10x (replay.py).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string

from lessons.learners import learner_for_scope
from teachlab.core import ratelimits
from teachlab.core.dbasync import HubFed, NoHopDispatch, db_async
from teachlab.core.socketframes import FrameSizeCapped
from teachlab.core.socketnames import CLOSE_REFUSED, PING, PONG, WORKERS_GROUP, broker_group
from teachlab.lab.eventlog.broker import run_tag
from teachlab.lab.live.fragments import TEMPLATE
from teachlab.lab.live.hub import hub_join, hub_leave
from teachlab.lab.live.panels import RunPanels, broker_look, workers_look
from teachlab.lab.live.reader import reader_join, reader_leave
from teachlab.lab.live.replay import replay_send, replay_speed
from teachlab.lab.runs import reading
from teachlab.lab.runs.errors import LabError
from teachlab.lab.runs.lanes import lane_get

# Close codes in the 4000 range are ours; htmx's ws extension does not retry them.
RESYNC_EVERY = 3  # seconds between two redraws a socket may ask for


@db_async
def owned_run(scope: dict, run_id: str):
    learner = learner_for_scope(scope)
    if learner is None:
        return None
    return reading.run_for_learner(run_id, learner)


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
        self.panels = RunPanels(run)
        if run.status == "running":
            # One look now at the broker and the workers, so the panels are not empty until
            # the monitor's next snapshots; then the hub hands those over as they come.
            self.panels.lane_tag = await self._broker_join(run)
            snapshot = await broker_look(run.lane) if self.panels.lane_tag else None
            await self._join(WORKERS_GROUP)
            await self.send(text_data=self.panels.first(snapshot, await workers_look()))
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
        speed = replay_speed(speed_text)
        if speed is None:
            await self._error("Replay speed must be 1 or 10.")
            return
        await replay_send(self.run, speed, lambda html: self.send(text_data=html))

    async def _join(self, group: str) -> None:
        await hub_join(group, self)
        self.joined.append(group)

    async def _broker_join(self, run) -> str:
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
            # a page that lost track, and a script cannot hammer it (teachlab/core/ratelimits.py).
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
        """Broker snapshots and the workers list, as the panels they change (panels.py)."""
        html = self.panels.deliver(messages, reader=self.reader if self.following else None)
        if html:
            await self.send(text_data=html)

"""The live run socket: joins one run's group, only for that run's owner, and forwards the HTML
the worker rendered once. On connect it first sends everything stored so far (the backlog), so a
page opened mid-run or reconnected is complete; events already in the backlog are not sent twice.
"""

from __future__ import annotations

import asyncio
import json

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string

from lessons.learners import learner_for_scope
from teachlab.lab.fragments import TEMPLATE, picture_from, render_event_html

# Close codes in the 4000 range are ours; htmx's ws extension does not retry them.
CLOSE_NOT_YOURS = 4403
DONE_TEXT = {
    "done": "Run finished: every copy has settled.",
    "timed_out": "Run timed out with copies still unsettled (a crashed worker holds them?).",
    "failed": "The run failed while publishing; see your runs list.",
}
FILL_DELAY = 1.0  # seconds; a worker stores its events within a few hundred ms of publishing


@database_sync_to_async
def owned_run(scope: dict, run_id: str):
    from teachlab.lab.runs import run_for_learner

    learner = learner_for_scope(scope)
    if learner is None:
        return None
    return run_for_learner(run_id, learner)


@database_sync_to_async
def backlog(run) -> tuple[str, set[int]]:
    """Every panel redrawn from the stored events, and the seqs it covers."""
    from teachlab.lab.runs import run_events, run_summary

    events = run_events(run)
    context = {
        "picture": picture_from(events),
        "counts": run_summary(run),
        "prediction": run.prediction,
        "final": run.status != "running",
    }
    return render_to_string(f"{TEMPLATE}#backlog", context), {e["seq"] for e in events}


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


def broker_html(snapshot: dict | None, run_tag: str) -> str:
    entries = (snapshot or {}).get("unacked") or []
    mine = [e for e in entries if e.get("run_tag") == run_tag]
    restored = [e for e in (snapshot or {}).get("restored") or [] if e.get("run_tag") == run_tag]
    context = {
        "oob": True,
        "snapshot": snapshot,
        "mine": mine,
        "others": len(entries) - len(mine),
        "restored": restored,
    }
    return render_to_string(f"{TEMPLATE}#broker", context)


class RunConsumer(AsyncWebsocketConsumer):
    groups: list[str] = []

    async def connect(self) -> None:
        self.run = None
        self.joined: list[str] = []
        self.sent: set[int] = set()
        run_id = self.scope["url_route"]["kwargs"]["run_id"]
        run = await owned_run(self.scope, run_id)
        if run is None:
            # Missing and not-yours look the same: the handshake is refused.
            await self.close(code=CLOSE_NOT_YOURS)
            return
        self.run = run
        # Join before reading the backlog: an event stored meanwhile arrives both ways and
        # the seq check below drops the second copy; none can fall in between.
        await self._join(run.group)
        self.lane_tag = ""
        if run.status == "running":
            self.lane_tag = await self._broker_join(run)
        await self.accept()
        high = await seq_high_water(run.id)
        html, seqs = await backlog(run)
        self.sent = seqs
        await self.send(text_data=html + self._status("Live: connected."))
        # Workers publish an event before they store it. One published just before we joined
        # but not yet stored when we read the backlog would be lost: fetch such gaps later.
        self.gap = set(range(1, high + 1)) - seqs
        if self.gap:
            self._fill_later(attempt=1)

    def _fill_later(self, *, attempt: int) -> None:
        async def later() -> None:
            await asyncio.sleep(FILL_DELAY * attempt)
            await self.channel_layer.send(
                self.channel_name, {"type": "lab.fill", "attempt": attempt}
            )

        self.fill_task = asyncio.ensure_future(later())

    async def lab_fill(self, message: dict) -> None:
        gap = self.gap - self.sent
        if not gap:
            return
        found = await stored_events(self.run, gap)
        for event in found:
            if event["seq"] not in self.sent:
                self.sent.add(event["seq"])
                await self.send(text_data=render_event_html(event))
        self.gap = gap - {e["seq"] for e in found}
        if self.gap and message.get("attempt", 1) < 3:
            self._fill_later(attempt=message.get("attempt", 1) + 1)

    async def _join(self, group: str) -> None:
        await self.channel_layer.group_add(group, self.channel_name)
        self.joined.append(group)

    async def _broker_join(self, run) -> str:
        from teachlab.lab.broker import run_tag
        from teachlab.lab.lanes import lane_get

        lane = await database_sync_to_async(lane_get)(run.lane)
        if lane.kind != "redis":
            return ""
        await self._join(f"lab.broker.{lane.name}")
        return run_tag(run.id)

    async def disconnect(self, code: int) -> None:
        task = getattr(self, "fill_task", None)
        if task is not None:
            task.cancel()
        for group in self.joined:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        """Watchers only listen; the one request understood is a resync. Anything else gets
        an error to this client alone and changes nothing."""
        try:
            frame = json.loads(text_data or "")
        except (TypeError, ValueError):
            frame = None
        if isinstance(frame, dict) and frame.get("action") == "resync":
            html, seqs = await backlog(self.run)
            self.sent |= seqs
            await self.send(text_data=html)
            return
        await self.send(
            text_data=render_to_string(
                f"{TEMPLATE}#error",
                {"error_text": "The server ignored a message it did not understand."},
            )
        )

    # --- group messages ------------------------------------------------------------------

    async def lab_event(self, message: dict) -> None:
        event = message.get("event") or {}
        seq = event.get("seq")
        if seq is not None:
            if seq in self.sent:
                return
            self.sent.add(seq)
        html = message.get("html")
        if html is None:
            html = render_event_html(event)
        await self.send(text_data=html)

    async def lab_done(self, message: dict) -> None:
        summary = message.get("summary") or {}
        context = {"oob": True, "counts": summary, "final": True}
        context["prediction"] = summary.get("prediction", self.run.prediction)
        html = render_to_string(f"{TEMPLATE}#counters", context)
        html += render_to_string(f"{TEMPLATE}#prediction", context)
        html += self._status(DONE_TEXT.get(summary.get("status"), "The run is over."))
        await self.send(text_data=html)

    async def lab_broker(self, message: dict) -> None:
        if self.lane_tag:
            await self.send(text_data=broker_html(message.get("snapshot"), self.lane_tag))

    def _status(self, text: str) -> str:
        return render_to_string(f"{TEMPLATE}#status", {"status_text": text})

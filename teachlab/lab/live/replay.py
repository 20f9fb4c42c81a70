"""A finished run replayed over its socket at 1x or 10x: the stored events again, drawn by
the reader's batch renderer, so a replay looks like the run did live."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from django.template.loader import render_to_string

from teachlab.core.dbasync import db_async
from teachlab.lab.live.fragments import TEMPLATE, render_batch_html, render_done_html
from teachlab.lab.runs.reading import run_events, run_summary

REPLAY_SPEEDS = {1.0, 10.0}
REPLAY_TICK = 0.05  # seconds of replay time gathered into one frame


def replay_speed(text: str) -> float | None:
    """The speed a page asked for, or None when it is not one the page offers."""
    try:
        speed = float(text)
    except ValueError:
        return None
    return speed if speed in REPLAY_SPEEDS else None


async def replay_send(run, speed: float, send: Callable[[str], Awaitable[None]]) -> None:
    """Send the run's frames as they happened, `speed` times faster."""
    events = await db_async(run_events)(run)
    reset = {
        "counts": {"tasks": len(run.task_ids)},
        "prediction": run.prediction,
        "status_text": f"Replaying at {speed:g}×…",
    }
    await send(render_to_string(f"{TEMPLATE}#replay_reset", reset))
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
        await send(render_batch_html(batch))
    # The stored summary (with per-task numbers) brings back the explanation the reset
    # took away: the counters and the text agree all along (issue 29).
    summary = {**(await db_async(run_summary)(run)), "status": "replayed"}
    await send(render_done_html(summary, events=events))

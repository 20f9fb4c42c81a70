"""A finished run as frames for lab.js to replay at 1x or 10x: each frame is the event's time
and the same HTML a live push carried (run_events gives each event its counters as of then)."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from teachlab.lab.fragments import TEMPLATE, render_event_html
from teachlab.lab.runs import run_events


def replay_frames(run) -> dict[str, Any]:
    frames = [
        {"seq": event["seq"], "t": event.get("t") or 0, "html": render_event_html(event)}
        for event in run_events(run)
    ]
    reset = render_to_string(
        f"{TEMPLATE}#counters", {"oob": True, "counts": {"tasks": len(run.task_ids or [])}}
    )
    return {"run": run.id, "events": frames, "reset": reset}

"""A finished run as frames for lab.js to replay at 1x or 10x: each frame is the event's time
and the same HTML a live push carried (run_events gives each event its counters as of then)."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from teachlab.lab.fragments import TEMPLATE, render_event_html
from teachlab.lab.reading import run_events


def replay_frames(run) -> dict[str, Any]:
    events = run_events(run)
    frames = [
        {"seq": event["seq"], "t": event.get("t") or 0, "html": render_event_html(event)}
        for event in events
    ]
    reset = render_to_string(
        f"{TEMPLATE}#counters", {"oob": True, "counts": {"tasks": len(run.task_ids or [])}}
    )
    if frames:
        # The last frame also states the prediction against the final count.
        final = {"oob": True, "final": True, "prediction": run.prediction}
        final["counts"] = events[-1].get("counts") or {}
        frames[-1]["html"] += render_to_string(f"{TEMPLATE}#prediction", final)
    return {"run": run.id, "events": frames, "reset": reset}

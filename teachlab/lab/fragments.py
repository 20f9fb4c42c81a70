"""HTML for one lab event, rendered once (in the worker) and pushed as-is to every watcher.

The same partials of templates/lab/run.html draw a receipt row in the full page, in the
backlog sent when a socket connects, and in a live push, so the three can never disagree.

Event keys read (all optional but `kind` and `task_id`): seq, kind (received, started,
succeeded, failed, suppressed, revoked, expired), task_id, copy (1 for the first delivery),
worker, redelivered, at (epoch s), published_at (epoch s), run_started_at (epoch s), eta
(epoch s), visibility_timeout (s), counts (the run's counters so far, as run_summary gives).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.template.loader import render_to_string

TEMPLATE = "lab/run.html"

# Event kinds that end a delivery, and what the receipt row says about each.
OUTCOMES = {
    "started": "running",
    "succeeded": "executed",
    "finished": "executed",
    "failed": "failed",
    "suppressed": "suppressed",
    "revoked": "revoked",
    "expired": "expired",
}


def _kind(event: dict[str, Any]) -> str:
    return str(event.get("kind") or event.get("event") or event.get("type") or "")


def _num(value: Any, default: float | None = None) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def dom_id(task_id: str) -> str:
    """A task id made safe for an HTML id (Celery ids are uuids, but be strict anyway)."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(task_id))


def event_view(event: dict[str, Any]) -> dict[str, Any]:
    """The fields the partials need, tolerant of missing ones (older stored events)."""
    task_id = str(event.get("task_id") or "")
    published = _num(event.get("published_at"))
    at = _num(event.get("at"))
    since = _num(event.get("since_publish"))
    if since is None and at is not None and published is not None:
        since = at - published
    # The timeline's x axis is seconds since the run started.
    t = _num(event.get("t"))
    if t is None:
        started = _num(event.get("run_started_at"))
        if started is not None and at is not None:
            t = at - started
        else:
            t = since
    eta_t = _num(event.get("eta_t"))
    if eta_t is None:
        eta = _num(event.get("eta"))
        started = _num(event.get("run_started_at"))
        if eta is not None and started is not None:
            eta_t = eta - started
    return {
        "seq": event.get("seq"),
        "kind": _kind(event),
        "task_id": task_id,
        "dom": dom_id(task_id),
        "copy": int(_num(event.get("copy"), 1) or 1),
        "lane": (int(_num(event.get("copy"), 1) or 1) - 1) % 3,
        "worker": str(event.get("worker") or event.get("hostname") or ""),
        "redelivered": bool(event.get("redelivered")),
        "since": since,
        "at": at,
        "t": t,
        "eta_t": eta_t,
        "eta": _num(event.get("eta")),
        "vt": _num(event.get("visibility_timeout")),
        "outcome": OUTCOMES.get(_kind(event), ""),
        "detail": str(event.get("detail") or event.get("error") or ""),
    }


@dataclass
class Copy:
    """One delivery of one task: received at `t`, held, and (maybe) run at `end`."""

    task_id: str
    dom: str
    copy: int
    t: float | None
    vt: float | None
    worker: str = ""
    redelivered: bool = False
    since: float | None = None
    seq: Any = None
    at: float | None = None
    outcome: str = "waiting"
    end: float | None = None

    @property
    def lane(self) -> int:
        """Copies of one task are drawn on three alternating tracks so they do not hide
        each other where they overlap."""
        return (self.copy - 1) % 3

    @property
    def window_end(self) -> float | None:
        if self.t is None or self.vt is None:
            return None
        return self.t + self.vt


@dataclass
class TaskLine:
    task_id: str
    dom: str
    eta_t: float | None = None
    eta: float | None = None
    copies: list[Copy] = field(default_factory=list)
    done: bool = False


@dataclass
class Picture:
    """Everything the live page draws, rebuilt from stored events (page load, reconnect)."""

    receipts: list[Copy] = field(default_factory=list)
    tasks: dict[str, TaskLine] = field(default_factory=dict)
    last_seq: Any = None

    def add(self, event: dict[str, Any]) -> None:
        v = event_view(event)
        if v["seq"] is not None:
            self.last_seq = v["seq"]
        line = self.tasks.get(v["task_id"])
        if line is None:
            line = self.tasks[v["task_id"]] = TaskLine(v["task_id"], v["dom"])
        if v["eta_t"] is not None:
            line.eta_t = v["eta_t"]
        if v["eta"] is not None:
            line.eta = v["eta"]
        if v["kind"] == "received":
            c = Copy(
                task_id=v["task_id"],
                dom=v["dom"],
                copy=v["copy"],
                t=v["t"],
                vt=v["vt"],
                worker=v["worker"],
                redelivered=v["redelivered"],
                since=v["since"],
                seq=v["seq"],
                at=v["at"],
            )
            self.receipts.append(c)
            line.copies.append(c)
            return
        if v["outcome"]:
            for c in line.copies:
                if c.copy == v["copy"]:
                    c.outcome = v["outcome"]
                    if v["outcome"] != "running":
                        c.end = v["t"]
            if v["outcome"] in {"executed", "suppressed", "failed", "revoked", "expired"}:
                line.done = True

    @property
    def waiting(self) -> list[TaskLine]:
        return [line for line in self.tasks.values() if not line.done and line.eta is not None]


def picture_from(events: list[dict[str, Any]]) -> Picture:
    pic = Picture()
    for event in events:
        pic.add(event)
    return pic


def render_event_html(event: dict[str, Any], *, counts: dict[str, Any] | None = None) -> str:
    """Out-of-band swaps for one event: append a receipt row, mark an outcome, grow the
    timeline, drop a finished countdown bar, and refresh the counters when they are known."""
    v = event_view(event)
    counts = counts if counts is not None else event.get("counts")
    ctx = {"v": v, "counts": counts, "prediction": event.get("prediction")}
    return render_to_string(f"{TEMPLATE}#event_oob", ctx)

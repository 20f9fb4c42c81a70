"""The run page's HTML for events: a batch's frame, a full redraw, the end of a run.

The partials of templates/lab/run.html draw the full page; a batch and a redraw, drawn many
times a second in a burst, are built by run_html.py as the same HTML without the template
engine (tests/lab/test_run_html.py holds the two equal).

Events are the dicts of labevent.LabEvent.as_dict (live from the log, or stored); a missing
key draws as nothing there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.template.loader import render_to_string

from teachlab.lab.eventlog.labevent import page_marks
from teachlab.lab.live import run_html
from teachlab.lab.models import Kind

TEMPLATE = "lab/run.html"

# What the receipt row says after each kind of event (a receipt itself says "waiting";
# a requeued copy keeps what it said).
OUTCOMES = {
    Kind.STARTED: "running",
    Kind.FINISHED: "executed",
    Kind.FAILED: "failed",
    Kind.SUPPRESSED: "suppressed",
    Kind.REVOKED: "revoked",
    Kind.REQUEUED: "requeued",  # a warm shutdown handed it back: a later copy follows
}
# outcomes after which the task waits no more
ENDED = set(OUTCOMES.values()) - {"running", "requeued"}


def _num(value: Any, default: float | None = None) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def dom_id(task_id: str) -> str:
    """A task id made safe for an HTML id (Celery ids are uuids, but be strict anyway)."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(task_id))


def worker_short(hostname: str) -> str:
    """redis-short-2@some-host -> redis-short-2: the lab's name for it, short enough for a phone."""
    return hostname.split("@", 1)[0]


def event_view(event: dict[str, Any]) -> dict[str, Any]:
    """The fields the partials need from an event dict (labevent.LabEvent.as_dict's)."""
    task_id = str(event.get("task_id") or "")
    t = _num(event.get("t"))  # the timeline's x axis: seconds since the run started
    eta = _num(event.get("eta"))
    started = _num(event.get("run_started_at"))
    kind = str(event.get("kind") or "")
    copy = int(_num(event.get("copy"), 1) or 1)
    worker = str(event.get("worker") or "")
    return {
        "seq": event.get("seq"),
        "index": event.get("index"),
        "ran": t if kind == Kind.STARTED else None,
        "kind": kind,
        "receipt": kind == Kind.RECEIVED,
        "task_id": task_id,
        "dom": dom_id(task_id),
        "copy": copy,
        "worker": worker,
        "worker_short": worker_short(worker),
        "redelivered": bool(event.get("redelivered")),
        "since": _num(event.get("since_publish")),
        "at": _num(event.get("at")),
        "t": t,
        "eta_t": eta - started if eta is not None and started is not None else None,
        "eta": eta,
        "vt": _num(event.get("visibility_timeout")),
        "outcome": OUTCOMES.get(kind, ""),
        "marks": page_marks(event),
    }


# What a copy takes from its `received` event's view.
RECEIPT_VIEW = "task_id dom copy t vt worker redelivered since seq at index marks".split()


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
    index: int | None = None
    ran: float | None = None  # when its body started (seconds since the run was fired)
    marks: tuple[tuple[str, str], ...] = ()  # data attributes of its row (labevent.page_marks)

    @property
    def worker_short(self) -> str:
        return worker_short(self.worker)

    @classmethod
    def received(cls, v: dict[str, Any]) -> Copy:
        """A delivery as its `received` event's view shows it."""
        return cls(**{name: v[name] for name in RECEIPT_VIEW})

    @property
    def lane(self) -> int:
        """Copies of one task are drawn on three alternating tracks so they do not hide
        each other where they overlap."""
        return (self.copy - 1) % 3


@dataclass
class TaskLine:
    task_id: str
    dom: str
    eta_t: float | None = None
    eta: float | None = None
    copies: list[Copy] = field(default_factory=list)
    done: bool = False
    index: int | None = None

    @property
    def order(self) -> int:
        """Rows sort by ETA: a run's ETAs rise with the task index (spacing is never negative),
        so the index orders them, also for rows appended live in arrival order (CSS order)."""
        return self.index if self.index is not None else 0


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
            line = self.tasks[v["task_id"]] = TaskLine(v["task_id"], v["dom"], index=v["index"])
        if v["eta_t"] is not None:
            line.eta_t = v["eta_t"]
        if v["eta"] is not None:
            line.eta = v["eta"]
        if v["receipt"]:
            c = Copy.received(v)
            self.receipts.append(c)
            line.copies.append(c)
            return
        if v["outcome"]:
            for c in line.copies:
                if c.copy == v["copy"]:
                    c.outcome = v["outcome"]
                    if v["ran"] is not None:
                        c.ran = v["ran"]
                    if v["outcome"] != "running":
                        c.end = v["t"]
            if v["outcome"] in ENDED:
                line.done = True

    @property
    def waiting(self) -> list[TaskLine]:
        return [line for line in self.lines if not line.done and line.eta is not None]

    @property
    def lines(self) -> list[TaskLine]:
        """Timeline rows in ETA order (then by index)."""
        far = float("inf")
        return sorted(
            self.tasks.values(),
            key=lambda line: (line.eta_t if line.eta_t is not None else far, line.order),
        )

    def copy_of(self, task_id: str, copy: int) -> Copy | None:
        line = self.tasks.get(task_id)
        if line is None:
            return None
        return next((c for c in line.copies if c.copy == copy), None)


def picture_from(events: list[dict[str, Any]]) -> Picture:
    picture = Picture()
    for event in events:
        picture.add(event)
    return picture


DONE_TEXT = {
    "done": "Run finished: every copy has settled.",
    "timed_out": "Run timed out with copies still unsettled (a crashed worker holds them?).",
    "failed": "The run failed while publishing; see your runs list.",
    "replayed": "Replay finished.",
}


@dataclass
class BatchPicture:
    """What one batch changes on the page, merged so each thing is drawn once: a copy
    received and run within the batch is one row with its outcome, not a row and a swap."""

    rows: list[Copy] = field(default_factory=list)  # new receipt rows
    lines: list[TaskLine] = field(default_factory=list)  # new timeline rows (first copies)
    copies: list[Copy] = field(default_factory=list)  # later copies on rows already shown
    outcomes: dict[tuple[str, int], tuple[Copy, float | None]] = field(default_factory=dict)
    finished: list[str] = field(default_factory=list)  # doms of countdown bars to drop

    def add(
        self,
        event: dict[str, Any],
        known: dict[tuple[str, int], Copy],
        picture: Picture | None = None,
    ) -> None:
        v = event_view(event)
        key = (v["task_id"], v["copy"])
        if v["receipt"]:
            c = Copy.received(v)
            known[key] = c
            self.rows.append(c)
            if v["copy"] == 1:
                line = TaskLine(
                    v["task_id"], v["dom"], eta_t=v["eta_t"], eta=v["eta"], index=v["index"]
                )
                line.copies.append(c)
                self.lines.append(line)
            else:
                self.copies.append(c)
            return
        if not v["outcome"]:
            return
        c = known.get(key)
        if c is None:  # a copy received in an earlier batch: swap its cell and bar
            c = Copy(task_id=v["task_id"], dom=v["dom"], copy=v["copy"], t=None, vt=None)
            # When its body started, if that was in an earlier batch: the reader's picture
            # holds it (a dict lookup, no query).
            seen = picture.copy_of(v["task_id"], v["copy"]) if picture is not None else None
            if seen is not None:
                c.ran = seen.ran
            self.outcomes[key] = (c, v["at"])
            known[key] = c
        elif key in self.outcomes:
            self.outcomes[key] = (c, v["at"])
        if v["ran"] is not None:
            c.ran = v["ran"]
        c.outcome = v["outcome"]
        if v["outcome"] != "running":
            c.end = v["t"]
            if v["eta"] is not None and v["outcome"] in ENDED:
                self.finished.append(v["dom"])


def render_batch_html(
    events: list[dict[str, Any]],
    *,
    done: dict | None = None,
    last: str = "",
    picture: Picture | None = None,
    history: list[dict[str, Any]] | None = None,
) -> str:
    """One frame for a batch of events: each kind of change in one container where it can
    be (rows, timeline rows, countdown bars), one counter update, and the cursor. htmx's
    out-of-band swaps cost more than linearly per frame, so fewer elements matter.
    `picture` (the reader's, every event so far) gives a copy's start time when it started
    in an earlier batch; `history` (every event) draws the end-of-run panels once."""
    batch = BatchPicture()
    known: dict[tuple[str, int], Copy] = {}
    for event in events:
        batch.add(event, known, picture)
    counts = next((e["counts"] for e in reversed(events) if e.get("counts")), None)
    prediction = next((e.get("prediction") for e in events), None)
    html = ""
    if events:
        html = run_html.batch_oob(
            batch, outcomes=batch.outcomes.values(), counts=counts, prediction=prediction
        )
    if done is not None:
        html += render_done_html(done, events=history)
    if last:
        html += render_to_string(f"{TEMPLATE}#cursor", {"last": last})
    return html


def after_run_context(
    *, summary: dict[str, Any], events: list[dict[str, Any]] | None
) -> dict[str, Any]:
    """The end-of-run panels' context: the explanation from the summary's numbers and, for a
    batch, copies per task and receipts over time from the events (no query: the reader
    holds both). Empty when the summary has no per-task numbers (a replay's end)."""
    from teachlab.lab.runs.errors import LabError
    from teachlab.lab.runs.explain import run_explanation
    from teachlab.lab.runs.lanes import lane_get

    per_task = summary.get("per_task")
    if not per_task:
        return {}
    try:
        lane = lane_get(str(summary.get("lane") or ""))
    except LabError:  # a lane taken out of the configuration since the run
        lane = None
    vt = summary.get("visibility_timeout")
    if vt is None and lane is not None:
        vt = lane.visibility_timeout
    kind = lane.kind if lane is not None else "redis"
    context: dict[str, Any] = {
        "explanation": run_explanation(summary=summary, visibility_timeout=vt, lane_kind=kind)
    }
    if len(per_task) >= 2 and events:
        from teachlab.lab.experiments.charts import charts_for_observation
        from teachlab.lab.experiments.observe import observation_from_events

        task_ids = sorted(per_task, key=lambda tid: per_task[tid].get("index", 0))
        observation = observation_from_events(
            task_ids=task_ids,
            params=summary.get("params") or {},
            events=[e for e in events if e.get("task_id") in per_task],
            lane=str(summary.get("lane") or ""),
            visibility_timeout=vt,
        )
        context["charts"] = charts_for_observation(
            observation=observation, force=True, histogram_of="receipts"
        )
    return context


def render_done_html(summary: dict[str, Any], *, events: list[dict] | None = None) -> str:
    """The final counters, the prediction against them, the status line and, when the
    summary has per-task numbers, what happened and why (and the charts of a batch)."""
    context = {"oob": True, "counts": summary, "final": True}
    context["prediction"] = summary.get("prediction")
    html = render_to_string(f"{TEMPLATE}#counters", context)
    if context["prediction"] is not None:  # pages watching a run without one have no line
        html += render_to_string(f"{TEMPLATE}#prediction", context)
    after = after_run_context(summary=summary, events=events)
    if after:
        html += render_to_string(f"{TEMPLATE}#after_run_oob", {**context, **after})
    text = DONE_TEXT.get(summary.get("status"), "The run is over.")
    return html + render_to_string(f"{TEMPLATE}#status", {"status_text": text})


def render_redraw_html(
    picture: Picture,
    *,
    counts: dict | None,
    prediction: int | None,
    done: dict | None,
    last: str,
    events: list[dict] | None = None,
) -> str:
    """Every panel redrawn from a picture (a fresh page, or a watcher too far behind)."""
    html = run_html.backlog(
        picture, counts=done or counts or {}, prediction=prediction, final=done is not None
    )
    if done is None:  # a finished run's frame says only that it finished: one status
        html += render_to_string(f"{TEMPLATE}#status", {"status_text": "Live: connected."})
    else:
        html += render_done_html(done, events=events)
    return html + render_to_string(f"{TEMPLATE}#cursor", {"last": last})


def render_redraw_events(
    events: list[dict],
    *,
    counts: dict | None,
    prediction: int | None,
    done: dict | None,
    last: str,
) -> str:
    """render_redraw_html from the events themselves: a picture of its own, so it can be
    drawn in a thread while the reader's picture goes on growing."""
    return render_redraw_html(
        picture_from(events),
        counts=counts,
        prediction=prediction,
        done=done,
        last=last,
        events=events,
    )

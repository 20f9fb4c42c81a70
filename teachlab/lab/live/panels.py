"""The run page's live panels (the broker's unacked messages, who holds the run's copies,
workers that died holding some), drawn once per change for every watcher of a run in this
process. The run socket (consumers.py) only forwards what these return.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from django.template.loader import render_to_string

from teachlab.core.dbasync import db_async
from teachlab.lab.eventlog.broker import broker_snapshot
from teachlab.lab.live.fragments import TEMPLATE
from teachlab.lab.live.losses import worker_losses
from teachlab.lab.worker.workers import workers_list

BROKER_LOOK_FRESH = 0.5  # seconds a connect-time look serves other sockets (the monitor's pace)
_broker_looks: dict[str, tuple[float, dict | None]] = {}


def _broker_look_sync(lane_name: str):
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


# Every watcher of a run in this process sees the same losses: worked out once per worker list.
_loss_frames: dict[str, tuple[object, str]] = {}


def loss_frame(run, reader, workers: list[dict]) -> str:
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


@dataclass
class RunPanels:
    """What one run page's panels show now, so that a new snapshot redraws only what changed."""

    run: object  # models.Run
    lane_tag: str = ""  # the run's tag in broker snapshots; "" when its lane has none
    unacked: int | None = None
    workers_rows: tuple = ()
    loss_html: str = ""  # who died holding this run's deliveries (losses.py)
    task_set: frozenset = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        self.task_set = frozenset(self.run.task_ids or ())

    def first(self, snapshot: dict | None, workers: list[dict] | None) -> str:
        """The broker and holders panels from one look, for a page that just connected."""
        html = ""
        if self.lane_tag:
            self.unacked = unacked_mine(snapshot, self.lane_tag)
            html += broker_frame(snapshot, self.lane_tag)
        self.workers_rows = holders_rows(workers, lane=self.run.lane, task_ids=self.task_set)
        return html + holders_frame(self.run.id, self.workers_rows, unacked=self.unacked)

    def deliver(self, messages: list[dict], reader=None) -> str:
        """Broker snapshots (twice a second) and the workers list (once a second): the broker
        panel, the holders panel whenever what it shows changed, and the losses (with the
        run's reader, whose state says who holds what)."""
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
                    workers, lane=self.run.lane, task_ids=self.task_set
                )
        if snapshot is not None:  # only the newest snapshot of a burst is worth drawing
            html += broker_frame(snapshot, self.lane_tag)
        if (self.workers_rows, self.unacked) != holders_before:
            html += holders_frame(self.run.id, self.workers_rows, unacked=self.unacked)
        if workers is not None and reader is not None:
            loss = loss_frame(self.run, reader, workers)
            if loss != self.loss_html:
                self.loss_html = loss
                html += loss
        return html

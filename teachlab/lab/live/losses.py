"""Deliveries of a run that a worker took and never handed back because it died: SIGKILL from
the lab's crash button, the OOM killer, `kill -9` in a terminal. The run page says so, from the
run state the reader holds and the worker registry the monitor publishes once a second."""

from __future__ import annotations

from collections import Counter
from typing import Any

from teachlab.lab.eventlog.runstate import RunState


def worker_losses(state: RunState, workers: list[dict[str, Any]]) -> list[dict]:
    """[{"worker", "held", "back"}]: per worker that died (or was started again) since it
    received them, the deliveries of this run it held unsettled (the run state's open copies);
    `back` when its supervisor has started it again. A worker the registry does not list is
    not judged (it may only have missed a heartbeat, e.g. while the lab's Redis restarted)."""
    registry = {w.get("hostname"): w for w in workers}
    held: Counter = Counter()
    back: dict[str, bool] = {}
    for copy in state.open_copies():
        worker, at = copy.worker, copy.at
        record = registry.get(worker)
        if record is None:
            continue
        restarted = float(record.get("started_at") or 0) > at
        if record.get("alive") and not restarted:
            continue
        held[worker] += 1
        back[worker] = bool(record.get("alive")) and restarted
    return [{"worker": w, "held": n, "back": back[w]} for w, n in sorted(held.items())]

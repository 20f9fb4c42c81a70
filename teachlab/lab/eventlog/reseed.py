"""Where a run's numbering resumes after the lab's Redis lost it (restarted with nothing on
disk): the highest seq and copy the recorder stored, and the per-kind tallies of the stored
events, so new events neither reuse a stored seq nor restart the copy numbers and counters.

Called from a worker's signal handler, only on that rare path (stream.entry_append).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Floors:
    seq: int
    copy: int
    counts: str  # "kind=n,..." as the counters hash holds them


def log_floors(*, run_id: str, task_id: str) -> Floors:
    from django.db.models import Max

    from teachlab.lab.eventlog.labevent import rows_state
    from teachlab.lab.eventlog.runstate import RunState
    from teachlab.lab.models import Kind, RunEvent

    try:
        rows = RunEvent.objects.filter(run_id=run_id)
        seq = rows.aggregate(m=Max("seq"))["m"] or 0
        copy = rows.filter(task_id=task_id, kind=Kind.RECEIVED).aggregate(m=Max("copy"))["m"]
        # The append script's raw tallies, as the run state keeps them (runstate.totals).
        tally = RunState().apply_all(rows_state(rows.order_by("seq"), run_id)).tally
    except Exception:  # noqa: BLE001 - without the database, number from 0 as before
        log.exception("run %s: could not read where its numbering resumes", run_id)
        return Floors(0, 0, "")
    if seq:
        log.warning("run %s: the lab's Redis lost its log; numbering resumes after %d", run_id, seq)
    counts = ",".join(f"{kind}={n}" for kind, n in sorted(tally.items()))
    return Floors(seq, copy or 0, counts)

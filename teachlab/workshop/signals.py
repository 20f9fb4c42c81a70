"""The lab's word on a room's run: when it is saved, and when it settles.

run_fire() stores the Run, then publishes its tasks, and the first receipts arrive while it
is still publishing. Hearing of the Run as soon as it is saved (label "room:<code>", which
shared_run_fire sets) lets every hub join the run's group before those receipts are sent.

When the run settles (teachlab.lab.eventlog.settle.run_settled, sent in the lab monitor's process),
the room's outcome is stored there and then, whether or not any screen of the room is
connected; the hubs' own "lab.done" path and the presenter's button find it stored.
"""

from __future__ import annotations

import logging

from teachlab.workshop.broadcast import follow_run
from teachlab.workshop.models import Room, SharedRun
from teachlab.workshop.predictions import shared_run_finish

log = logging.getLogger(__name__)
LABEL_PREFIX = "room:"


def run_saved(sender, instance, created: bool, **kwargs) -> None:
    if not created or not instance.label.startswith(LABEL_PREFIX):
        return
    room = Room.objects.filter(
        code=instance.label[len(LABEL_PREFIX) :], closed_at__isnull=True
    ).first()
    if room is None:
        return
    try:
        follow_run(room=room, run_id=instance.pk)
    except Exception:  # noqa: BLE001 - shared_run_fire asks the hubs again afterwards
        log.warning("could not tell room %s about run %s early", room.code, instance.pk)


def run_settled(sender, run, summary: dict, **kwargs) -> None:
    if not run.label.startswith(LABEL_PREFIX):
        return
    for shared in SharedRun.objects.filter(run_id=run.id, observed__isnull=True):
        shared_run_finish(shared=shared, summary=summary)

"""Join a room's screens to its lab run before the run's tasks go out.

run_fire() stores the Run, then publishes its tasks, and the first receipts arrive while it
is still publishing. Hearing of the Run as soon as it is saved (label "room:<code>", which
shared_run_fire sets) lets every hub join the run's group before those receipts are sent.
"""

from __future__ import annotations

import logging

from teachlab.workshop.broadcast import follow_run
from teachlab.workshop.models import Room

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

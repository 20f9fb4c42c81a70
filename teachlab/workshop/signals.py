"""Join a room's screens to its lab run before the run's tasks go out.

run_fire() stores the Run, then publishes its tasks, and the first receipts arrive while it
is still publishing. Hearing of the Run as soon as it is saved (label "room:<code>", which
shared_run_fire sets) lets every hub join the run's group before those receipts are sent.
"""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from teachlab.workshop.broadcast import room_group

log = logging.getLogger(__name__)
LABEL_PREFIX = "room:"


def run_saved(sender, instance, created: bool, **kwargs) -> None:
    if not created or not instance.label.startswith(LABEL_PREFIX):
        return
    from teachlab.workshop.models import Room

    room_id = (
        Room.objects.filter(code=instance.label[len(LABEL_PREFIX) :], closed_at__isnull=True)
        .values_list("pk", flat=True)
        .first()
    )
    layer = get_channel_layer()
    if room_id is None or layer is None:
        return
    try:
        async_to_sync(layer.group_send)(
            room_group(room_id), {"type": "room.follow", "run_id": instance.pk}
        )
    except Exception:  # noqa: BLE001 - the hub also joins when the fire is announced
        log.warning("could not tell room %s about run %s early", room_id, instance.pk)

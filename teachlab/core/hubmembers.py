"""The one rule both in-process hubs (a lab run's, a workshop room's) follow when a socket
leaves: the last member out stops the hub, so no reader goes on for nobody."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any


async def leave(hubs: dict[Hashable, Any], key: Hashable, member: Any) -> None:
    """Take `member` out of the hub at `key`; stop and forget the hub once it is empty."""
    hub = hubs.get(key)
    if hub is None:
        return
    hub.members.discard(member)
    if not hub.members:
        hubs.pop(key, None)
        await hub.stop()

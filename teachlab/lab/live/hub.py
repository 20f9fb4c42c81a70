"""One channel-layer subscription per group per server process, fanned out in memory.

A run watched by 50 sockets would otherwise cost 50 channel-layer messages per event, each
popped from Redis in a few round trips by the process's single receive loop, plus a hop to
Channels' database thread per message: that, not the network, was the delay under a burst
(scripts/bench_lab.py). Here each event crosses Redis once per process and is handed to the
local sockets by a plain method call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from channels.layers import get_channel_layer
from django.conf import settings

from teachlab.core import hubmembers

log = logging.getLogger(__name__)

# After the first message of a burst, wait this long for the rest: every frame costs the server the
# same whatever its size, so fewer, larger frames keep a burst's tail short (scripts/bench_lab.py).
GATHER_SECONDS = settings.LAB_HUB_GATHER_SECONDS


class Member(Protocol):
    async def hub_deliver(self, messages: list[dict]) -> None: ...


class GroupHub:
    def __init__(self, group: str) -> None:
        self.group = group
        self.members: set[Member] = set()
        self.layer = get_channel_layer()
        self.channel: str | None = None
        self.task: asyncio.Task | None = None
        self.sender: asyncio.Task | None = None
        self.inbox: asyncio.Queue[dict] = asyncio.Queue()

    async def start(self) -> None:
        self.channel = await self.layer.new_channel()
        # Joined before start() returns: a member that reads the backlog afterwards cannot
        # miss an event published in between.
        await self.layer.group_add(self.group, self.channel)
        self.task = asyncio.create_task(self.pump(), name=f"lab-hub-{self.group}")
        self.sender = asyncio.create_task(self.fan_out(), name=f"lab-hub-out-{self.group}")

    async def stop(self) -> None:
        for task in (self.task, self.sender):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self.channel is not None:
            with contextlib.suppress(Exception):
                await self.layer.group_discard(self.group, self.channel)

    async def pump(self) -> None:
        while True:
            try:
                message = await self.layer.receive(self.channel)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - Redis hiccup: wait, then listen again
                log.exception("lab hub %s: receive failed", self.group)
                await asyncio.sleep(0.5)
                continue
            self.inbox.put_nowait(message)

    async def fan_out(self) -> None:
        """Hand every member what arrived since the last hand-out, as one batch: one frame per
        socket for a burst, with no waiting when events come one at a time."""
        while True:
            batch = [await self.inbox.get()]
            if GATHER_SECONDS:
                await asyncio.sleep(GATHER_SECONDS)
            while not self.inbox.empty():
                batch.append(self.inbox.get_nowait())
            for member in list(self.members):
                try:
                    await member.hub_deliver(batch)
                except Exception:  # noqa: BLE001 - one socket gone mid-send must not stop the rest
                    log.debug("lab hub %s: delivery failed", self.group, exc_info=True)


_hubs: dict[tuple[int, str], GroupHub] = {}
_locks: dict[tuple[int, str], asyncio.Lock] = {}


def _key(group: str) -> tuple[int, str]:
    # Keyed by event loop too: tests run each case on a loop of its own.
    return (id(asyncio.get_running_loop()), group)


async def hub_join(group: str, member: Member) -> None:
    key = _key(group)
    async with _locks.setdefault(key, asyncio.Lock()):
        hub = _hubs.get(key)
        if hub is None:
            hub = GroupHub(group)
            await hub.start()
            _hubs[key] = hub
        hub.members.add(member)


async def hub_leave(group: str, member: Member) -> None:
    key = _key(group)
    async with _locks.setdefault(key, asyncio.Lock()):
        await hubmembers.leave(_hubs, key, member)

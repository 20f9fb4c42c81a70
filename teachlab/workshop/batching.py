"""Frames of one kind from many sockets in a room, handled together.

When a room of 300 votes in the same second, each vote on its own takes the room's lock, reads
the round and writes one row, one after another in the server's one thread for database work,
and the last voter waits for all the others (seconds: scripts/bench_workshop.py). Here the
votes that arrive while a batch is being stored wait for the next batch, which stores them all
at once; one vote alone is a batch of one, with no added wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from teachlab.core.dbasync import db_async


class RoomBatcher:
    """Queue items per room and hand each batch to `handle(room_id, items)` (sync, run through
    db_async), which returns one result per item, in order."""

    def __init__(self, handle: Callable[[int, list], list]) -> None:
        self.handle = handle
        self.queues: dict[tuple[int, int], list[tuple[Any, asyncio.Future]]] = {}

    async def submit(self, room_id: int, item: Any) -> Any:
        loop = asyncio.get_running_loop()
        key = (id(loop), room_id)
        future = loop.create_future()
        queue = self.queues.get(key)
        if queue is None:  # nobody is draining this room: start, and take this item first
            self.queues[key] = queue = []
            queue.append((item, future))
            loop.create_task(self._drain(key, room_id))
        else:
            queue.append((item, future))
        return await future

    async def _drain(self, key: tuple[int, int], room_id: int) -> None:
        try:
            while self.queues[key]:
                batch = self.queues[key][:]
                self.queues[key].clear()
                try:
                    results = await db_async(self.handle)(room_id, [item for item, _ in batch])
                except Exception as exc:  # noqa: BLE001 - every waiter hears of it
                    results = [exc] * len(batch)
                for (_, future), result in zip(batch, results, strict=True):
                    if future.done():  # its socket went away meanwhile
                        continue
                    if isinstance(result, BaseException):
                        future.set_exception(result)
                    else:
                        future.set_result(result)
        finally:
            leftover = self.queues.pop(key, [])
            for _, future in leftover:  # only if draining itself failed
                if not future.done():
                    future.set_exception(RuntimeError("the batch was not stored"))

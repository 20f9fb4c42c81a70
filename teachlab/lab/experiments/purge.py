"""Take one run's messages out of a Redis lane after it has been observed.

`acks_late` with a body longer than the timeout never stops on its own (each copy is again
longer than the timeout), so experiment 5 purges its run's entries from kombu's `unacked`
hash, `unacked_index` and the queue once it has seen the storm. Copies already inside a body
finish normally; nothing is restored any more.
"""

from __future__ import annotations

import json

import redis

from teachlab.lab.lanes import lane_get
from teachlab.lab.models import Run

# kombu's Redis transport key names (kombu.transport.redis.Channel defaults).
UNACKED = "unacked"
UNACKED_INDEX = "unacked_index"


def _task_id(raw) -> str | None:
    try:
        message = json.loads(raw)
    except (TypeError, ValueError):
        return None
    if isinstance(message, list):  # unacked entries are [message, exchange, routing_key]
        message = message[0] if message else {}
    if not isinstance(message, dict):
        return None
    return (message.get("headers") or {}).get("id")


def run_purge(*, run: Run) -> int:
    """Delete the run's waiting and unacknowledged messages; returns how many went."""
    lane = lane_get(run.lane)
    if not lane.is_redis:
        return 0
    ids = set(run.task_ids)
    client = redis.Redis.from_url(lane.broker_url, socket_timeout=5)
    removed = 0
    for tag, raw in client.hscan_iter(UNACKED):
        if _task_id(raw) in ids:
            client.pipeline().zrem(UNACKED_INDEX, tag).hdel(UNACKED, tag).execute()
            removed += 1
    for raw in client.lrange(lane.queue, 0, -1):
        if _task_id(raw) in ids:
            removed += client.lrem(lane.queue, 0, raw)
    return removed

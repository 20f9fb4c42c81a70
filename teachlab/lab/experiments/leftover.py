"""How many of a run's messages the broker still holds once an experiment's steps are done.

Storms that end on their own (acks_late with a long body, BROKER-FACTS 3) leave nothing in
kombu's `unacked` hash or the queue, and a quorum queue with `x-delivery-limit` drops what
came back too often: the `messages_left` check shows either, where receipts alone could not.
"""

from __future__ import annotations

import json
import logging

import redis

from teachlab.lab.models import Run
from teachlab.lab.runs.lanes import Lane, lane_get

log = logging.getLogger(__name__)

# kombu's Redis transport key name (kombu.transport.redis.Channel.unacked_key).
UNACKED = "unacked"


def message_task_id(raw) -> str | None:
    try:
        message = json.loads(raw)
    except (TypeError, ValueError):
        return None
    if isinstance(message, list):  # unacked entries are [message, exchange, routing_key]
        message = message[0] if message else {}
    if not isinstance(message, dict):
        return None
    return (message.get("headers") or {}).get("id")


def _redis_left(run: Run, lane: Lane) -> int:
    ids = set(run.task_ids)
    client = redis.Redis.from_url(lane.broker_url, socket_timeout=5)
    held = sum(1 for _tag, raw in client.hscan_iter(UNACKED) if message_task_id(raw) in ids)
    waiting = sum(1 for raw in client.lrange(lane.queue, 0, -1) if message_task_id(raw) in ids)
    return held + waiting


def _rabbit_left(lane: Lane) -> int:
    """Messages ready in the lane's queue (each RabbitMQ lane has a queue of its own); one a
    worker holds unacknowledged is not counted, its receipt shows instead."""
    from kombu import Connection

    with Connection(lane.broker_url, connect_timeout=3) as conn:
        channel = conn.channel()
        try:
            _name, ready, _consumers = channel.queue_declare(queue=lane.queue, passive=True)
        finally:
            channel.close()
    return int(ready)


def run_messages_left(*, run: Run) -> int | None:
    """The run's messages still queued or unacknowledged; None when the broker cannot say."""
    lane = lane_get(run.lane)
    try:
        return _redis_left(run, lane) if lane.is_redis else _rabbit_left(lane)
    except Exception:  # noqa: BLE001 - a check on it then fails with "never observed"
        log.exception("could not count the messages left of run %s", run.id)
        return None


# kombu's Redis transport key for an exchange's bindings (Channel.keyprefix_queue).
BINDING_PREFIX = "_kombu.binding."


def bindings_evict(*, lane: str) -> list[str]:
    """Delete the lane's binding sets, as `allkeys-*` eviction may (they carry no TTL), and
    name them. Raises LabError when there were none: the step would show nothing."""
    from teachlab.lab.runs.errors import LabError

    found = lane_get(lane)
    if not found.is_redis:
        raise LabError(f"{lane} is not a Redis lane; it has no binding sets to delete.")
    client = redis.Redis.from_url(found.broker_url, socket_timeout=5)
    keys = sorted(k.decode() for k in client.scan_iter(match=f"{BINDING_PREFIX}*"))
    if not keys:
        raise LabError(f"{lane} has no binding sets to delete.")
    client.delete(*keys)
    return keys

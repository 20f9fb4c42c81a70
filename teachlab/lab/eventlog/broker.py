"""What a Redis lane's broker database holds right now: the queue, and the `unacked` hash and
`unacked_index` sorted set where a waiting countdown message sits (BROKER-FACTS 5).

kombu keeps a message's delivery tag when it restores it, so a restore shows up as the same
tag with a newer delivery time in `unacked_index`; `BrokerWatcher` remembers the last times
it saw and marks those jumps.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import time

import redis

from teachlab.lab.runs.lanes import Lane, lane_get, lanes

UNACKED = "unacked"
UNACKED_INDEX = "unacked_index"
MAX_ENTRIES = 300  # a 1,800-task batch would drown the panel; the count is still exact


def run_tag(run_id: str) -> str:
    """A stand-in for a run id in broker snapshots that everyone may see: ids are capabilities."""
    return hashlib.sha256(f"lab-run:{run_id}".encode()).hexdigest()[:12]


@functools.cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=2)


def _decode(raw: bytes) -> dict:
    """One `unacked` value, [message, exchange, routing_key], down to what the panel shows."""
    try:
        message, _exchange, routing_key = json.loads(raw)
        headers = message.get("headers") or {}
        body = message.get("body", "")
        if message.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        _args, kwargs, _embed = json.loads(body)
    except (ValueError, TypeError, KeyError):
        return {}
    delivery = message.get("properties", {}).get("delivery_info") or {}
    return {
        "task_id": headers.get("id"),
        "routing_key": routing_key,
        "run_tag": run_tag(kwargs["run"]) if kwargs.get("run") else None,
        "index": kwargs.get("index"),
        "eta": headers.get("eta"),
        "redelivered": bool(headers.get("redelivered") or delivery.get("redelivered")),
    }


def _lane_for_queue(queue: str) -> str | None:
    for lane in lanes():
        if lane.queue == queue:
            return lane.name
    return None


def broker_snapshot(lane: str | Lane) -> dict:
    """Queue length and every unacked entry with its age as a fraction of the lane's timeout.

    Entries from other lanes sharing the database (experiment 12) are listed too, each with
    its own `lane`: whichever consumer has the shortest timeout restores them all."""
    lane = lane_get(lane)
    if not lane.is_redis:
        return {"lane": lane.name, "at": time.time(), "supported": False}
    r = _client(lane.broker_url)
    pipe = r.pipeline(transaction=False)
    pipe.llen(lane.queue)
    pipe.zcard(UNACKED_INDEX)
    pipe.zrange(UNACKED_INDEX, 0, MAX_ENTRIES - 1, withscores=True)
    queue_length, unacked_count, scored = pipe.execute()
    tags = [tag for tag, _ in scored]
    values = r.hmget(UNACKED, tags) if tags else []
    now = time.time()
    vt = lane.visibility_timeout or 0
    entries = []
    for (tag, delivered_at), raw in zip(scored, values, strict=True):
        if not raw:  # acked between the two reads: no longer unacked
            continue
        info = _decode(raw)
        age = now - delivered_at
        entries.append(
            {
                "tag": tag.decode() if isinstance(tag, bytes) else tag,
                "delivered_at": delivered_at,
                "age": round(age, 3),
                "fraction": round(min(1.0, age / vt), 4) if vt else None,
                "lane": _lane_for_queue(info.get("routing_key") or "") or "",
                "restores": 0,
                **info,
            }
        )
    return {
        "lane": lane.name,
        "supported": True,
        "at": now,
        "queue": lane.queue,
        "queue_length": int(queue_length),
        "visibility_timeout": lane.visibility_timeout,
        "unacked_count": int(unacked_count),
        "unacked": entries,
        "restored": [],
    }


class BrokerWatcher:
    """Snapshots of one lane over time, marking each restore (a tag delivered again)."""

    def __init__(self, lane: str | Lane) -> None:
        self.lane = lane_get(lane)
        self.seen: dict[str, float] = {}  # tag -> last delivery time seen
        self.restores: dict[str, int] = {}

    def snapshot(self) -> dict:
        snap = broker_snapshot(self.lane)
        if not snap.get("supported"):
            return snap
        current = {}
        for entry in snap["unacked"]:
            tag, delivered = entry["tag"], entry["delivered_at"]
            before = self.seen.get(tag)
            if before is not None and delivered > before + 0.001:
                self.restores[tag] = self.restores.get(tag, 0) + 1
                snap["restored"].append(
                    {"tag": tag, "task_id": entry.get("task_id"), "at": delivered}
                )
            entry["restores"] = self.restores.get(tag, 0)
            current[tag] = delivered
        # A restored tag can sit in the queue for a moment before a worker takes it again:
        # remember vanished tags a little while so that the jump is still seen.
        keep_after = snap["at"] - 30
        self.seen = {t: d for t, d in self.seen.items() if d > keep_after} | current
        self.restores = {t: n for t, n in self.restores.items() if t in self.seen}
        return snap

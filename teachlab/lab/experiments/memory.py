"""Fill a lane's Redis to its `maxmemory` and free it again, for the experiment that shows what
a full broker under `noeviction` does to a message a worker pops (noeviction-loses-popped).

Only a lane on a server of its own may be filled (`maxmemory` is the whole server's), and only
one set to `noeviction`: under an eviction policy the filler would push the lane's own keys
out instead, a different story. The filler keys carry a prefix of their own, so freeing them
touches nothing else.
"""

from __future__ import annotations

import redis

from teachlab.lab.experiments.leftover import message_task_id
from teachlab.lab.runs.errors import LabError
from teachlab.lab.runs.lanes import Lane, lane_get

FILLER = "lab:filler:"
CHUNK = 256 * 1024  # bytes per filler value while far from the limit
# The last filler value: written while memory is still under the limit (so Redis accepts it),
# it takes memory this far past the limit, not a few bytes that one popped message would free.
LAST = 2 * 1024 * 1024
HEADROOM = 1024 * 1024  # stop the small fillers this far under the limit
MAX_FILLERS = 4096


def _client(lane: Lane) -> redis.Redis:
    return redis.Redis.from_url(lane.broker_url, socket_timeout=5)


def _noeviction_lane(name: str) -> Lane:
    lane = lane_get(name)
    if not lane.is_redis:
        raise LabError(f"{name} is not a Redis lane; there is no memory limit to fill.")
    config = _client(lane).config_get("maxmemory*")
    if config.get("maxmemory-policy") != "noeviction" or int(config.get("maxmemory", 0)) <= 0:
        raise LabError(
            f"{name}'s Redis is not set to a maxmemory with noeviction "
            f"(maxmemory {config.get('maxmemory')}, policy {config.get('maxmemory-policy')})."
        )
    return lane


def unacked_writes_refused(*, lane: str) -> int:
    """How many `ZADD` commands the lane's server refused since it started: kombu's record of a
    delivery in `unacked_index` (kombu.transport.redis.QoS.append). The server is the lane's
    own, so no other lane's refusals count here. `rejected_calls` exists from Redis 6.2; on
    6.0 this is 0 whatever was refused, so the experiment's check counts on 6.2 and later."""
    stats = _client(lane_get(lane)).info("commandstats").get("cmdstat_zadd", {})
    return int(stats.get("rejected_calls", 0))


def memory_fill(*, lane: str) -> dict:
    """Write filler values until the server stands past its `maxmemory`, then check that it
    refuses a write. Returns what it found: the filler count, the bytes past the limit, and the
    unacked refusals so far (the run's own are those after this)."""
    found = _noeviction_lane(lane)
    client = _client(found)
    limit = int(client.config_get("maxmemory")["maxmemory"])
    written = 0
    # SETRANGE at an offset allocates the whole value from a command of a few bytes, so no
    # client buffer stands in for data that is not there.
    while client.info("memory")["used_memory"] < limit - HEADROOM and written < MAX_FILLERS:
        client.setrange(f"{FILLER}{written}", CHUNK, "x")
        written += 1
    try:
        client.setrange(f"{FILLER}last", LAST, "x")
    except redis.exceptions.OutOfMemoryError:
        pass  # already past the limit
    try:
        client.set(f"{FILLER}probe", "1")
    except redis.exceptions.OutOfMemoryError:
        pass
    else:
        raise LabError(f"{lane}'s Redis still took a write after {written + 1} filler values.")
    used = int(client.info("memory")["used_memory"])
    return {
        "fillers": written + 1,
        "over_by": used - limit,
        "refused_before": unacked_writes_refused(lane=lane),
    }


def memory_free(*, lane: str) -> int:
    """Delete the filler values (a delete is allowed at the limit); returns how many."""
    client = _client(_noeviction_lane(lane))
    keys = list(client.scan_iter(match=f"{FILLER}*", count=1000))
    if keys:
        client.delete(*keys)
    return len(keys)


def queued_now(*, lane: str, task_ids: list[str]) -> int:
    """The run's messages waiting in the lane's queue list right now."""
    found = lane_get(lane)
    ids = set(task_ids)
    return sum(
        1 for raw in _client(found).lrange(found.queue, 0, -1) if message_task_id(raw) in ids
    )

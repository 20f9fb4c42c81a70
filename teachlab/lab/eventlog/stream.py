"""The lab's event log: one Redis Stream per run in the app database, written by the workers.

Each entry is one event. Its stream id is `<seq>-0`, seq numbered per run by the same Lua call
that appends it, so the id says both "the order of events" and "where a reader is". A run's
end is a marker entry `<seq>-1` (kind `done`), so readers learn of it through the same log.

Everything that shows or stores events reads from here: the recorder (consumer group
`recorder`, stores rows), the server-side reader (live pages, workshop rooms), `lab run` and
`lab tail`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import redis
from django.conf import settings

from teachlab.lab.eventlog.labevent import entry_decode
from teachlab.lab.models import Kind
from teachlab.lab.runs.store import app_redis
from teachlab.lab.worker.wire import WireUnsupported, wire_call

KEY_TTL = 2 * 24 * 3600  # seconds a run's stream and counters live in Redis
# Entries per run kept in the stream. The recorder takes them within a second; readers that
# need older ones read the database. 200k is ~40x the largest batch the lab allows today.
MAXLEN = 200_000
ACTIVE = "lab:streams"  # run ids whose streams the recorder follows
GROUP = "recorder"


def stream_key(run_id: str) -> str:
    return f"lab:stream:{run_id}"


def reset_key(run_id: str) -> str:
    return f"lab:run:{run_id}:reset"


def seq_key(run_id: str) -> str:
    return f"lab:run:{run_id}:seq"


def log_open(run_id: str) -> None:
    """Start a run's numbering at 0 when it is fired. From then on a missing counter means
    the lab's Redis lost it (a restart of a Redis that keeps nothing on disk), not a new run:
    the next append then carries on from what the database stored (see APPEND_LUA)."""
    app_redis().set(seq_key(run_id), 0, ex=KEY_TTL, nx=True)


# KEYS: seq, counts, copy, stream, active set, reset marker.  ARGV: kind, ttl, known copy
# (0 = unknown), maxlen, run id, seq floor, copy floor, counts (seq floor and counts both '':
# not given, so ask for them),
# then the entry's field/value pairs. One atomic call: the seq, the copy number, the counters
# and the entry agree, and ids rise in seq order across workers.
#
# A Redis restarted without its data has lost the counters of a run in flight. Numbering again
# from 1 would reuse seqs the recorder has stored (and drop the new events as duplicates), so
# the script answers {-1, 0} instead; the caller reads the floors from the database (what the
# recorder stored) and calls again. The reset marker tells readers where the numbering resumed.
APPEND_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ARGV[6] == '' and ARGV[8] == '' then return {-1, 0} end
  redis.call('SET', KEYS[1], ARGV[6], 'EX', ARGV[2], 'NX')
  redis.call('SET', KEYS[6], ARGV[6], 'EX', ARGV[2], 'NX')
  if redis.call('EXISTS', KEYS[2]) == 0 then
    for pair in string.gmatch(ARGV[8], '[^,]+') do
      local k, v = string.match(pair, '([^=]+)=(%d+)')
      redis.call('HSET', KEYS[2], k, v)
    end
  end
end
if ARGV[1] == '{received}' and redis.call('EXISTS', KEYS[3]) == 0
   and redis.call('EXISTS', KEYS[6]) == 1 then
  if ARGV[7] == '' then return {-1, 0} end
  redis.call('SET', KEYS[3], ARGV[7], 'EX', ARGV[2], 'NX')
end
local seq = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
local copy = tonumber(ARGV[3])
if ARGV[1] == '{received}' then
  copy = redis.call('INCR', KEYS[3])
  redis.call('EXPIRE', KEYS[3], ARGV[2])
  if copy == 1 then redis.call('HINCRBY', KEYS[2], 'first', 1) end
elseif copy == 0 then
  copy = tonumber(redis.call('GET', KEYS[3]) or '1')
end
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
redis.call('EXPIRE', KEYS[2], ARGV[2])
local flat = redis.call('HGETALL', KEYS[2])
local parts = {}
for i = 1, #flat, 2 do parts[#parts + 1] = flat[i] .. '=' .. flat[i + 1] end
local entry = {'XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], seq .. '-0',
               'c', copy, 'n', table.concat(parts, ',')}
for i = 9, #ARGV do entry[#entry + 1] = ARGV[i] end
redis.call(unpack(entry))
redis.call('EXPIRE', KEYS[4], ARGV[2])
redis.call('SADD', KEYS[5], ARGV[5])
return {seq, copy}
""".replace("{received}", Kind.RECEIVED.value)
APPEND_SHA = hashlib.sha1(APPEND_LUA.encode(), usedforsecurity=False).hexdigest()  # EVALSHA names
_append_script = None


def _append_eval(keys: list[str], args: list) -> tuple[int, int]:
    """One EVALSHA of APPEND_LUA, spoken directly on a socket of the thread's own (wire.py)
    where the URL allows: this is the call every delivery waits for in the worker."""
    global _append_script
    try:
        url = f"{settings.REDIS_URL}/{settings.REDIS_DB_APP}"
        reply = wire_call(url, ["EVALSHA", APPEND_SHA, len(keys), *keys, *args])
        if str(reply).startswith("NOSCRIPT"):  # a reply that is not an error is a list
            app_redis().script_load(APPEND_LUA)
            reply = wire_call(url, ["EVALSHA", APPEND_SHA, len(keys), *keys, *args])
        if isinstance(reply, redis.ResponseError):
            raise reply
        seq, copy = reply
    except WireUnsupported:
        if _append_script is None:
            _append_script = app_redis().register_script(APPEND_LUA)
        seq, copy = _append_script(keys=keys, args=args)
    return int(seq), int(copy)


def entry_append(
    *, run_id: str, kind: str, task_id: str, known_copy: int, fields: dict[str, str]
) -> tuple[int, int]:
    """Append one event to its run's stream: one round trip (two after the lab's Redis lost
    the run's counters). Returns (seq, copy)."""
    flat: list[str] = []
    for key, value in fields.items():
        flat += [key, value]
    keys = [
        seq_key(run_id),
        f"lab:run:{run_id}:counts",
        f"lab:run:{run_id}:copy:{task_id}",
        stream_key(run_id),
        ACTIVE,
        reset_key(run_id),
    ]
    head = [kind, KEY_TTL, known_copy, MAXLEN, run_id]
    seq, copy = _append_eval(keys, [*head, "", "", "", *flat])
    if seq == -1:  # the script's answer when the run's counters are gone (see APPEND_LUA)
        from teachlab.lab.eventlog.reseed import log_floors

        floors = log_floors(run_id=run_id, task_id=task_id)
        seq, copy = _append_eval(keys, [*head, floors.seq, floors.copy, floors.counts, *flat])
    return seq, copy


DONE_LUA = """
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local id = '0-1'
if #last > 0 then
  local ms, n = string.match(last[1][1], '(%d+)-(%d+)')
  id = ms .. '-' .. (tonumber(n) + 1)
end
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], id, 'k', 'done', 's', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return id
"""


def done_append(*, run_id: str, summary: dict) -> str:
    """The end-of-run marker, right after the last entry so far (`<last seq>-1`)."""
    text = json.dumps(summary, separators=(",", ":"))
    script = app_redis().register_script(DONE_LUA)
    return script(keys=[stream_key(run_id)], args=[MAXLEN, text, KEY_TTL])


# --- entries to event dicts (the codec: labevent.py) ------------------------------------------


def entry_event(run_id: str, entry_id: str, fields: dict[str, str]) -> dict[str, Any]:
    """One stream entry as the event dict every screen uses (docs/reference/lab.md, "The event
    dict"). The done marker gives {"kind": "done", "summary": ...}."""
    return entry_decode(run_id, entry_id, fields).as_dict()


def stream_read(run_id: str, *, after: str = "0-0", count: int = 1000, block: int | None = None):
    """Events after the entry id `after`, oldest first, as event dicts (sync; CLI and tests)."""
    r = app_redis()
    if block is None:
        entries = r.xrange(stream_key(run_id), min=f"({after}", count=count)
    else:
        found = r.xread({stream_key(run_id): after}, count=count, block=block)
        entries = found[0][1] if found else []
    return [entry_event(run_id, entry_id, fields) for entry_id, fields in entries]

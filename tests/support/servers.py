"""Web servers the tests start as processes of their own, on a free port, against the session's
live database: daphne for the live server and the drills, `scripts/serve` for the several-
servers tests. One wrapper starts them in a process group of their own, waits until a page
answers, and stops the whole group."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.support.ports import free_port, port_closed


def daphne_argv(port: int) -> list[str]:
    return [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
            "teachlab.asgi:application"]  # fmt: skip


class ServerProcess:
    """`argv` (made for the port) in the test services' environment plus `env`, its output in
    `log` (default: the session's folder); ready when `ready_path` answers, whatever the status.
    After a stop, start() brings it back on the same port."""

    def __init__(self, argv, env: dict[str, str], log: Path | None = None, *,
                 ready_path: str = "/healthz") -> None:  # fmt: skip
        from tests.stack import STATE

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.argv = argv(self.port) if callable(argv) else argv
        self.env, self.ready_path = env, ready_path
        self.log = log or STATE / f"server-{self.port}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, *, wait: bool = True, timeout: float = 60):
        from tests.stack import BASE_DIR, test_env

        self.proc = subprocess.Popen(
            self.argv,
            cwd=BASE_DIR,
            env=test_env(**self.env),
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        if wait:
            self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                httpx.get(self.url + self.ready_path, timeout=2)
                return
            except httpx.HTTPError:
                time.sleep(0.2)
        tail = self.log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{self.argv[:3]} on {self.port} did not answer:\n{tail}")

    def stop(self, timeout: float = 10) -> None:
        """SIGTERM to the group, SIGKILL if it lingers; returns once the port is closed."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        port_closed(self.port)


class LiveServer(ServerProcess):
    """daphne serving the whole app (HTTP and WebSockets) on a free port, against the migrated
    live database with the lessons loaded."""

    def __init__(self, **env: str) -> None:
        super().__init__(daphne_argv, env)

    def start(self, **kwargs) -> LiveServer:
        from tests.stack import manage

        manage("migrate", "--noinput", "-v", "0")
        if manage("help", "synclessons", check=False).returncode == 0:
            manage("synclessons")
        return super().start(**kwargs)

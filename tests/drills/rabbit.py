"""A RabbitMQ node of the drill's own, which it may stop and start: the system RabbitMQ on 5672
is shared with other work and is never touched.

Its own node name, AMQP port, Erlang distribution port, data, logs, config (none: the system's
rabbitmq.conf binds 5672), plugins (none) and Erlang cookie (HOME is its directory), started
with RabbitMQ's own script as this user. "Stopped" is `rabbitmqctl stop_app`: the broker closes
every connection and its port, as a stopped service does, while the Erlang VM stays up so the
start again takes seconds instead of a VM boot.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from tests.support.ports import free_port, port_closed, wait_for_port

RABBIT_BIN = Path("/usr/lib/rabbitmq/bin")


class PrivateRabbit:
    def __init__(self) -> None:
        self.port = free_port()
        self.dist_port = free_port()
        self.node = f"teachlab-drill-{os.getpid()}@localhost"
        self.base = Path(tempfile.mkdtemp(prefix="teachlab-rabbit-"))
        self.url = f"amqp://guest:guest@127.0.0.1:{self.port}//"
        self.proc: subprocess.Popen | None = None
        (self.base / "env.conf").write_text("")
        (self.base / "enabled_plugins").write_text("[].\n")
        (self.base / "rabbitmq.conf").write_text(
            f"listeners.tcp.default = 127.0.0.1:{self.port}\n"
            "loopback_users.guest = true\n"
            "log.console = false\n"
        )
        self.env = {
            **os.environ,
            "HOME": str(self.base),  # its own Erlang cookie
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_MNESIA_BASE": str(self.base / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.base / "log"),
            "RABBITMQ_CONFIG_FILE": str(self.base / "rabbitmq.conf"),
            "RABBITMQ_CONF_ENV_FILE": str(self.base / "env.conf"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.base / "enabled_plugins"),
            "RABBITMQ_PID_FILE": str(self.base / "node.pid"),
            "ERL_EPMD_ADDRESS": "127.0.0.1",
        }

    @staticmethod
    def installed() -> bool:
        return (RABBIT_BIN / "rabbitmq-server").exists()

    def ctl(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(RABBIT_BIN / "rabbitmqctl"), "-n", self.node, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def start(self, timeout: float = 90) -> PrivateRabbit:
        self.proc = subprocess.Popen(
            [str(RABBIT_BIN / "rabbitmq-server")],
            env=self.env,
            cwd=self.base,
            stdout=(self.base / "server.out").open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_for_port(self.port, timeout=timeout)
        return self

    def cut(self) -> None:
        done = self.ctl("stop_app")
        assert done.returncode == 0, done.stderr or done.stdout
        port_closed(self.port)

    def restore(self) -> None:
        done = self.ctl("start_app")
        assert done.returncode == 0, done.stderr or done.stdout
        wait_for_port(self.port)

    def log_tail(self) -> str:
        out = self.base / "server.out"
        return out.read_text(errors="replace")[-2000:] if out.exists() else ""

    def stop(self) -> None:
        """Killed, not stopped: the node and its data are thrown away anyway."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        shutil.rmtree(self.base, ignore_errors=True)

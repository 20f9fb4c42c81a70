"""Classroom mode (`scripts/run --classroom`): an instructor's laptop serving a room network.

Production mode without TLS: DEBUG off, a secret generated once and kept in var/, worker
controls for staff only, the machine's LAN addresses as the allowed hosts, the HTTPS toggles
off (a room network has no certificate; settings warn about it), every interface bound, and a
class-wide quota on lab runs so thirty laptops cannot bury the instructor's workers.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from pathlib import Path

SECRET_FILE = "classroom-secret-key"  # noqa: S105 - a file name
CLASS_RUNS_PER_MINUTE = 30
PLAIN_HTTP = ("SECURE_COOKIES", "HSTS_SECONDS", "SSL_REDIRECT", "PROXY_SSL_HEADER")
# Set whatever the shell says: a classroom must never run with DEBUG or open controls.
FORCED = {"TEACHLAB_DEBUG", "TEACHLAB_LOCAL_CONTROLS"}


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback and link-local, as psutil lists them
    per interface (no network traffic, no guessing from the hostname)."""
    import socket

    import psutil

    found = []
    for addrs in psutil.net_if_addrs().values():
        for addr in addrs:
            if addr.family != socket.AF_INET:
                continue
            ip = ipaddress.ip_address(addr.address)
            if not (ip.is_loopback or ip.is_link_local) and addr.address not in found:
                found.append(addr.address)
    return found


def classroom_secret(var_dir: Path) -> str:
    """The key in var/classroom-secret-key, made on first use and readable by its owner only;
    the same key on every start, so sessions survive a restart."""
    path = Path(var_dir) / SECRET_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another start made it a moment ago
        else:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


def classroom_env(*, secret: str, addresses: list[str], port: int) -> dict[str, str]:
    """The environment classroom mode runs the server and workers with."""
    hosts = [*addresses, "localhost", "127.0.0.1", "[::1]"]
    env = {
        "TEACHLAB_DEBUG": "0",
        "TEACHLAB_SECRET_KEY": secret,
        "TEACHLAB_LOCAL_CONTROLS": "0",
        "TEACHLAB_ALLOWED_HOSTS": ",".join(hosts),
        "TEACHLAB_CSRF_TRUSTED_ORIGINS": ",".join(f"http://{h}:{port}" for h in hosts),
        "TEACHLAB_HOST": "0.0.0.0",  # noqa: S104 - the point: the room's laptops reach it
        "TEACHLAB_PORT": str(port),
        "TEACHLAB_LAB_CLASS_RUNS_PER_MINUTE": str(CLASS_RUNS_PER_MINUTE),
        **{f"TEACHLAB_{toggle}": "0" for toggle in PLAIN_HTTP},
    }
    if addresses:
        env["TEACHLAB_PUBLIC_URL"] = f"http://{addresses[0]}:{port}"
    return env


def classroom_apply(*, environ: dict, var_dir: Path) -> dict[str, str]:
    """Put classroom mode into `environ` (os.environ in scripts/run). What the instructor set
    already wins, except DEBUG and local controls; returns what was set."""
    port = int(environ.get("TEACHLAB_PORT", "8000"))
    wanted = classroom_env(secret=classroom_secret(var_dir), addresses=lan_addresses(), port=port)
    applied = {}
    for name, value in wanted.items():
        if name in FORCED or name not in environ:
            environ[name] = value
            applied[name] = value
    return applied

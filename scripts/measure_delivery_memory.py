#!/usr/bin/env python
"""Measurement (not a test): how much worker memory one held delivery costs, the figure the
lab's cost model (teachlab/lab/runs/costs.py) multiplies by.

Starts a private Redis and one real lab worker on a lane (default redis-long: its 60 s
timeout is longer than the measurement, so every task is held exactly once), fires batches of
tasks with a long countdown, waits until the worker reports holding all of them (the lab's
worker registry), and reads the worker's resident memory before and after each batch.

    .venv/bin/python scripts/measure_delivery_memory.py [--tasks 2000] [--batches 2] [--repeat 3]

Writes docs/measurements/results/delivery-memory-<timestamp>.json (command, commit, machine,
started, figures) and prints the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import types
import uuid
from datetime import UTC, datetime
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
RESULTS = BASE_DIR / "docs" / "measurements" / "results"

from teachlab.core.percentiles import percentile  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, timeout: float = 20) -> None:
    from teachlab.core.devstack import port_answers

    deadline = time.monotonic() + timeout
    while not port_answers("127.0.0.1", port):
        if time.monotonic() > deadline:
            raise RuntimeError(f"nothing answered on port {port}")
        time.sleep(0.1)


def _redis_start(workdir: Path) -> tuple[subprocess.Popen, str]:
    from teachlab.core.devstack import redis_binary

    port = _free_port()
    proc = subprocess.Popen(
        [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        + ["--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_port(port)
    return proc, f"redis://127.0.0.1:{port}"


def _rss(pid: int) -> int:
    import psutil

    return psutil.Process(pid).memory_info().rss


def _settled_rss(pid: int, *, seconds: float = 3.0) -> int:
    """RSS once it stops moving (the consumer may still be allocating after the last receipt)."""
    last, stable_since = _rss(pid), time.monotonic()
    while time.monotonic() - stable_since < seconds:
        time.sleep(0.5)
        now = _rss(pid)
        if abs(now - last) > 64 * 1024:
            stable_since = time.monotonic()
        last = now
    return last


def _held(name: str) -> int:
    from teachlab.lab.worker.workers import workers_list

    for worker in workers_list():
        if worker["name"] == name and worker["alive"]:
            return worker["held"]
    return -1


def _wait_held(name: str, want: int, *, timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    held = _held(name)
    while held < want and time.monotonic() < deadline:
        time.sleep(0.5)
        held = _held(name)
    if held < want:
        raise RuntimeError(f"{name} holds {held} deliveries after {timeout}s, wanted {want}")
    return held


def _fire(lane, count: int, countdown: float) -> None:
    """Tasks exactly as run_fire publishes them (same name, kwargs), for a run not stored."""
    from teachlab.lab.runs.firing import task_meta
    from teachlab.lab.runs.params import RunParams
    from teachlab.lab.worker.celery_app import lane_app
    from teachlab.lab.worker.tasks import task_name

    app = lane_app(lane)
    p = RunParams(count=count, countdown=countdown)
    run = types.SimpleNamespace(
        id=f"mem-{uuid.uuid4().hex[:12]}", fired_at=time.time(), task_ids=[], prediction=None
    )
    meta = task_meta(run=run, lane=lane, p=p)
    name = task_name(acks_late=False, reject_on_worker_lost=False, retry_on_worker_lost=False)
    with app.producer_or_acquire() as producer:
        for index in range(count):
            app.send_task(
                name,
                kwargs={**meta, "index": index, "published_at": time.time()},
                task_id=str(uuid.uuid4()),
                producer=producer,
                countdown=countdown,
            )


def measure_once(*, lane_name: str, tasks: int, batches: int, countdown: float) -> dict:
    """One fresh worker: RSS before, then after each batch is held."""
    from teachlab.lab.runs.lanes import lane_get, worker_argv

    lane = lane_get(lane_name)
    name = f"{lane.name}-mem{os.getpid()}"
    argv = worker_argv(lane, 1)
    argv[argv.index("--name") + 1] = name
    env = {**os.environ, "TEACHLAB_WORKER_LOGLEVEL": "WARNING"}
    worker = subprocess.Popen(
        argv, cwd=BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait_held(name, 0, timeout=60)
        # one warm-up task: imports and connection pools a first delivery brings in
        _fire(lane, 1, countdown)
        _wait_held(name, 1)
        points = [{"held": _held(name), "rss": _settled_rss(worker.pid)}]
        for batch in range(1, batches + 1):
            _fire(lane, tasks, countdown)
            _wait_held(name, 1 + batch * tasks)
            points.append({"held": _held(name), "rss": _settled_rss(worker.pid)})
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
    first, last = points[0], points[-1]
    per = (last["rss"] - first["rss"]) / (last["held"] - first["held"])
    steps = [
        (b["rss"] - a["rss"]) / (b["held"] - a["held"])
        for a, b in zip(points, points[1:], strict=False)
    ]
    return {
        "points": points,
        "bytes_per_held_delivery": round(per),
        "bytes_per_held_delivery_per_batch": [round(s) for s in steps],
    }


def _commit() -> str:
    found = subprocess.run(
        ["git", "-C", str(BASE_DIR), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "-C", str(BASE_DIR), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
    )
    return found.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def _machine() -> dict:
    import celery
    import kombu
    import psutil
    import redis

    return {
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "memory_bytes": psutil.virtual_memory().total,
        "load": round(os.getloadavg()[0], 2),
        "celery": celery.__version__,
        "kombu": kombu.__version__,
        "redis_py": redis.__version__,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lane", default="redis-long")
    parser.add_argument("--tasks", type=int, default=2000, help="tasks per batch")
    parser.add_argument("--batches", type=int, default=2)
    parser.add_argument("--countdown", type=float, default=600.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="teachlab-mem-"))
    redis_proc, url = _redis_start(workdir)
    os.environ["TEACHLAB_REDIS_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "teachlab.settings")
    import django

    django.setup()
    started, commit = datetime.now(UTC), _commit()  # the code measured, before any edit
    runs = []
    try:
        for number in range(1, args.repeat + 1):
            import redis

            redis.Redis.from_url(url).flushall()  # each run starts from an empty broker
            found = measure_once(
                lane_name=args.lane,
                tasks=args.tasks,
                batches=args.batches,
                countdown=args.countdown,
            )
            print(f"run {number}: {found['bytes_per_held_delivery']} bytes per held delivery")
            runs.append(found)
    finally:
        redis_proc.terminate()
        shutil.rmtree(workdir, ignore_errors=True)
    per = [r["bytes_per_held_delivery"] for r in runs]
    result = {  # the keys of teachlab/core/measurements.py's result files, and more
        "name": "delivery-memory",
        "what": "worker resident memory per held delivery (a countdown task the worker holds)",
        "command": " ".join(
            [".venv/bin/python", "scripts/measure_delivery_memory.py"] + sys.argv[1:]
        ),
        "commit": commit,
        "machine": _machine(),
        "started": started.isoformat(timespec="seconds"),
        "lane": args.lane,
        "tasks_per_batch": args.tasks,
        "batches": args.batches,
        "countdown": args.countdown,
        "figures": {
            "bytes_per_held_delivery": per,
            "median": round(percentile(per, 0.5)),  # nearest rank: the middle of three
            "min": min(per),
            "max": max(per),
        },
        "runs": runs,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"delivery-memory-{started.strftime('%Y%m%dT%H%M%SZ')}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"median {result['figures']['median']} bytes per held delivery; wrote {path}")


if __name__ == "__main__":
    main()

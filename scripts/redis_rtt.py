"""Round trips to a Redis from a process of its own, for as long as asked: the floor under the
lab's signal handler wall times (docs/measurements/history/lab.md).

A lab handler waits for one Redis reply before it returns. This probe sends PING every 5 ms on a
plain socket from a single-threaded process, so what it sees is Redis's and the machine's delay
alone, with no other thread of the same process in the way. Run it beside `lab fidelity`:

    .venv/bin/python scripts/redis_rtt.py --url redis://127.0.0.1:6391 --seconds 62

It prints {"n", "p50", "p99", "max"} (milliseconds) and saves the same as a JSON result in
docs/measurements/results/ (teachlab/core/measurements.py; `--out DIR` for elsewhere).
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teachlab.core.measurements import Measurement, out_option_add  # noqa: E402
from teachlab.core.percentiles import percentiles_ms  # noqa: E402


def rtt_sample(*, url: str, seconds: float, every: float = 0.005) -> list[float]:
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), 2.0)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    times = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        sock.sendall(b"*1\r\n$4\r\nPING\r\n")
        reply = b""
        while not reply.endswith(b"\r\n"):
            chunk = sock.recv(64)
            if not chunk:
                raise SystemExit("Redis closed the connection")
            reply += chunk
        times.append(time.perf_counter() - started)
        time.sleep(every)
    sock.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="redis://127.0.0.1:6379")
    parser.add_argument("--seconds", type=float, default=60.0)
    out_option_add(parser)
    args = parser.parse_args()
    measurement = Measurement("redis-rtt")
    times = rtt_sample(url=args.url, seconds=args.seconds)
    found = {"n": len(times), **percentiles_ms(times)}
    print(json.dumps(found))
    figures = {"n": found.pop("n"), **{f"{k}_ms": v for k, v in found.items()}}
    print(f"result: {measurement.save(figures, out=args.out)}", file=sys.stderr)


if __name__ == "__main__":
    main()

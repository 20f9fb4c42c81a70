#!/usr/bin/env python
"""Benchmark (not a test): what drawing the run page's frames costs the web process.

A run's reader draws one frame per batch it reads while every socket of its process waits,
and a full redraw when pages join. This draws, from a made-up run of 200 tasks on a 10 s
visibility timeout, the three kinds of 50-event batch a burst gives (first receipts, a restore
sweep's copies, bodies starting and finishing) and a 300-event redraw, many times each, and
prints the mean time of one. No stack is needed. The result goes to docs/measurements/results/
as JSON too (teachlab/core/measurements.py; `--out DIR` for elsewhere).

    .venv/bin/python scripts/bench_render.py [--repeat 200]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "teachlab.settings")

import django  # noqa: E402

django.setup()

from teachlab.core.measurements import Measurement, out_option_add  # noqa: E402
from teachlab.lab.eventlog.labevent import LabEvent  # noqa: E402
from teachlab.lab.live.fragments import Picture, render_batch_html, render_redraw_html  # noqa: E402


def event(seq: int, kind: str, index: int, copy: int, at: float) -> dict:
    """One event as the pages get it (built by the lab's event codec)."""
    return LabEvent(
        run="bench",
        kind=kind,
        task_id=f"3f2c9a10-aaaa-4bbb-8ccc-{index:012d}",
        seq=seq,
        index=index,
        copy=copy,
        worker=f"redis-short-{copy % 3 + 1}@lab-host",
        redelivered=copy > 1,
        at=at,
        t=round(at - 1000.0, 4),
        since_publish=round(at - 1000.0, 4),
        eta=1030.0 + index * 0.05,
        published_at=1000.0,
        run_started_at=1000.0,
        visibility_timeout=10.0,
        tasks=200,
        prediction=3,
        counts={"tasks": 200, "receipts": seq, "executions": 0, "duplicates": 0},
    ).as_dict()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=200)
    out_option_add(parser)
    args = parser.parse_args()
    measurement = Measurement("bench-render")
    first = [event(i + 1, "received", i, 1, 1000.1 + i * 0.01) for i in range(200)]
    sweep = [event(201 + i, "received", i, 2, 1010.2 + i * 0.005) for i in range(50)]
    runs = [
        event(251 + i, ("started", "finished")[i % 2], i // 2, 1, 1030.0 + i * 0.01)
        for i in range(50)
    ]
    picture = Picture()
    for e in first + sweep + runs:
        picture.add(e)
    cases = {
        "first_receipts_50": lambda: render_batch_html(first[:50], last="50-0", picture=picture),
        "restored_copies_50": lambda: render_batch_html(sweep, last="250-0", picture=picture),
        "starts_and_ends_50": lambda: render_batch_html(runs, last="300-0", picture=picture),
        "redraw_300": lambda: render_redraw_html(
            picture, counts=runs[-1]["counts"], prediction=3, done=None, last="300-0"
        ),
    }
    figures = {}
    for name, draw in cases.items():
        repeat = args.repeat if "redraw" not in name else max(1, args.repeat // 10)
        draw()
        started = time.perf_counter()
        for _ in range(repeat):
            draw()
        mean = (time.perf_counter() - started) / repeat * 1000
        print(f"{name:22} {mean:6.2f} ms  ({repeat} draws)")
        figures[f"{name}_ms"] = round(mean, 3)
    print(f"result: {measurement.save(figures, out=args.out)}")


if __name__ == "__main__":
    main()

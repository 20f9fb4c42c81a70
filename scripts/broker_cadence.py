#!/usr/bin/env python
"""Benchmark (not a test): how often a lane's broker snapshots reach a subscriber of its group,
as the run page's "Inside Redis" panel receives them from `lab monitor` (twice a second).

Against a running stack (scripts/run, or TEACHLAB_REDIS_URL pointing at one with `lab monitor`):

    .venv/bin/python scripts/broker_cadence.py [--lane redis-short] [--seconds 8]

Prints how many snapshots arrived and the gaps between them, in seconds, and saves them as a JSON
result in docs/measurements/results/ (teachlab/core/measurements.py; `--out DIR` for elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path


async def gaps(lane: str, seconds: float) -> list[float]:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(f"lab.broker.{lane}", channel)
    arrivals: list[float] = []
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        try:
            await asyncio.wait_for(layer.receive(channel), timeout=left)
        except TimeoutError:
            break
        arrivals.append(time.monotonic())
    return [round(b - a, 2) for a, b in zip(arrivals, arrivals[1:], strict=False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lane", default="redis-short")
    parser.add_argument("--seconds", type=float, default=8.0)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from teachlab.core.measurements import Measurement, out_option_add

    out_option_add(parser)
    args = parser.parse_args()
    measurement = Measurement(f"broker-cadence-{args.lane}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "teachlab.settings")
    import django

    django.setup()
    found = asyncio.run(gaps(args.lane, args.seconds))
    snapshots = len(found) + 1 if found else 0
    print(f"snapshots: {snapshots}; gaps (s): {found}")
    figures = {"snapshots": snapshots, "largest_gap_s": None, "mean_gap_s": None}
    if found:
        figures.update(largest_gap_s=max(found), mean_gap_s=round(sum(found) / len(found), 3))
        print(f"largest gap {max(found):.2f} s, mean {sum(found) / len(found):.2f} s")
    print(f"result: {measurement.save(figures, out=args.out)}")


if __name__ == "__main__":
    main()

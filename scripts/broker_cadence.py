#!/usr/bin/env python
"""Benchmark (not a test): how often a lane's broker snapshots reach a subscriber of its group,
as the run page's "Inside Redis" panel receives them from `lab monitor` (twice a second).

Against a running stack (scripts/run, or TEACHLAB_REDIS_URL pointing at one with `lab monitor`):

    .venv/bin/python scripts/broker_cadence.py [--lane redis-short] [--seconds 8]

Prints how many snapshots arrived and the gaps between them, in seconds.
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
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "teachlab.settings")
    import django

    django.setup()
    found = asyncio.run(gaps(args.lane, args.seconds))
    print(f"snapshots: {len(found) + 1 if found else 0}; gaps (s): {found}")
    if found:
        print(f"largest gap {max(found):.2f} s, mean {sum(found) / len(found):.2f} s")


if __name__ == "__main__":
    main()

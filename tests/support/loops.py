"""Running a coroutine from a sync test whatever ran before it in the session."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor


def on_a_loop_of_its_own(scenario):
    """Run the async scenario on a fresh loop in a thread: a browser test earlier in the
    session leaves Playwright's loop on this thread, where asyncio.run refuses to start."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, scenario()).result()

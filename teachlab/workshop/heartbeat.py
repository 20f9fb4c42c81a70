"""A room's page beats on its socket, so both ends notice a silent cut within seconds.

A Wi-Fi drop closes nothing: no FIN, traffic just stops. The server's socket then stays open
until daphne's own ping gives up (20 s interval + 30 s timeout), and the walk of issue 28
counted a phone as connected for 31.7 s after its cut. So a page sends PING every
BEAT_SECONDS (static/js/ws-reconnect.js) and the server answers PONG; the page reconnects
when it hears nothing for a few seconds, and the server counts a socket that has beaten once
out of the room when it falls SILENT_SECONDS quiet (back in at its next beat). A script's
socket that never beats is not held to a beat.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from teachlab.core.socketnames import PING, PONG

__all__ = ["PING", "PONG", "is_ping", "silence_watch"]

BEAT_SECONDS = 1.0  # the page's beat (ws-reconnect.js BEAT_MS)
# Six beats missed. The console should drop a silently cut person within 10 s: at most
# SILENT_SECONDS + CHECK_SECONDS after the last frame heard, plus one counts redraw.
SILENT_SECONDS = 6.0
CHECK_SECONDS = 1.0


def is_ping(text: str | None) -> bool:
    return text == PING


async def silence_watch(
    heard_at: Callable[[], float], fell_silent: Callable[[], Awaitable[None]]
) -> None:
    """Call `fell_silent` each time the socket goes SILENT_SECONDS without a frame
    (`heard_at` is the time.monotonic() of its last one); runs until cancelled."""
    told = False
    while True:
        await asyncio.sleep(CHECK_SECONDS)
        silent = time.monotonic() - heard_at() > SILENT_SECONDS
        if silent and not told:
            await fell_silent()
        told = silent

"""A cap on the size of the frames a browser sends over a socket (settings.WS_MAX_FRAME_BYTES).

uvicorn (scripts/serve, scripts/run) refuses a larger frame from its header before reading it;
this mixin refuses it in the consumer as well, for any other ASGI server (daphne reads what it
is sent), so no consumer parses a frame the pages could never have sent.
"""

from __future__ import annotations

import logging

from django.conf import settings

log = logging.getLogger(__name__)

CLOSE_TOO_BIG = 1009  # RFC 6455: "message too big to process"


def frame_bytes(message: dict) -> int:
    text = message.get("text")
    if text is not None:
        return len(text.encode()) if len(text) * 4 > settings.WS_MAX_FRAME_BYTES else len(text)
    return len(message.get("bytes") or b"")


class FrameSizeCapped:
    """Closes the socket with 1009 and a reason a person can read on a frame over the cap."""

    async def websocket_receive(self, message) -> None:
        most = settings.WS_MAX_FRAME_BYTES
        if frame_bytes(message) > most:
            log.info("%s: closed on a frame over %d bytes", type(self).__name__, most)
            await self.close(code=CLOSE_TOO_BIG, reason=f"Message too large (at most {most} bytes)")
            return
        await super().websocket_receive(message)

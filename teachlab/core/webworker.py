"""The gunicorn worker class scripts/serve runs: uvicorn serving the Channels ASGI app.

Channels' router answers only HTTP and WebSocket scopes, so the ASGI lifespan protocol is
off (uvicorn would otherwise log that the app refuses it at every start). Per-message deflate
is off: a lab batch goes to every watcher, and compressing it once per socket took more of the
server's CPU than anything else with 300 watchers (docs/measurements/history/lab.md).
Frames over settings.WS_MAX_FRAME_BYTES are refused from their header (close 1009), not read.
"""

from django.conf import settings
from uvicorn_worker import UvicornWorker


class WebWorker(UvicornWorker):
    CONFIG_KWARGS = {
        **UvicornWorker.CONFIG_KWARGS,
        "lifespan": "off",
        "ws": "websockets-sansio",
        "ws_per_message_deflate": False,
        "ws_max_size": settings.WS_MAX_FRAME_BYTES,
    }

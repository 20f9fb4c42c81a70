"""The gunicorn worker class scripts/serve runs: uvicorn serving the Channels ASGI app.

Channels' router answers only HTTP and WebSocket scopes, so the ASGI lifespan protocol is
off (uvicorn would otherwise log that the app refuses it at every start). Per-message deflate
is off: a lab batch goes to every watcher, and compressing it once per socket took more of the
server's CPU than anything else with 300 watchers (docs/measurements/history/lab.md).
"""

from uvicorn_worker import UvicornWorker


class WebWorker(UvicornWorker):
    CONFIG_KWARGS = {
        **UvicornWorker.CONFIG_KWARGS,
        "lifespan": "off",
        "ws": "websockets-sansio",
        "ws_per_message_deflate": False,
    }

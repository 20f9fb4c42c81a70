"""The gunicorn worker class scripts/serve runs: uvicorn serving the Channels ASGI app.

Channels' router answers only HTTP and WebSocket scopes, so the ASGI lifespan protocol is
off (uvicorn would otherwise log that the app refuses it at every start).
"""

from uvicorn_worker import UvicornWorker


class WebWorker(UvicornWorker):
    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "lifespan": "off", "ws": "websockets-sansio"}

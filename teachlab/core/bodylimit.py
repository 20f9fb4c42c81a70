"""A cap on the size of a request's body, enforced while it is read (settings.MAX_REQUEST_BYTES).

Django's ASGI handler reads the whole body into a temporary file before any view or middleware
runs, and uvicorn has no body limit of its own: 300 MB sent to the 2 MB progress import took
285 MB of temporary disk before the view's 400 (issue 26). This wraps the HTTP app: a body
that says it is too large is answered 413 before a byte of it is read, and one that grows too
large (chunked, or lying about its length) is answered 413 as soon as it does, and the rest is
never read.
"""

from __future__ import annotations

from django.conf import settings

PAGE = (
    "<!doctype html><title>Too large</title><h1>That request is too large</h1>"
    "<p>This server takes at most {size} in one request. A progress file from "
    "“Download my progress” is far smaller: choose that file.</p>"
)


def declared_length(scope: dict) -> int | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def too_large(send, most: int) -> None:
    body = PAGE.format(size=f"{most / (1024 * 1024):g} MB").encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyLimited:
    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        most = settings.MAX_REQUEST_BYTES
        declared = declared_length(scope)
        if declared is not None and declared > most:
            await too_large(send, most)
            return
        read = 0
        refused = False

        async def receive_within_limit():
            nonlocal read, refused
            message = await receive()
            if message["type"] == "http.request" and not refused:
                read += len(message.get("body", b""))
                if read > most:
                    refused = True
                    await too_large(send, most)
                    # Django's handler stops reading at a disconnect and answers nothing.
                    return {"type": "http.disconnect"}
            return message

        async def send_unless_refused(message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, receive_within_limit, send_unless_refused)

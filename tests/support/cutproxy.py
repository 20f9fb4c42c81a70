"""A TCP proxy that can cut traffic the way a Wi-Fi drop does: nothing is closed, no FIN or
RST is sent either way, bytes just stop arriving. The browser's offline switch and Playwright's
socket routing close sockets, which every client notices at once; this does not.

While cut, what either side sends is read and thrown away (a connection that outlives a real
drop loses it the same way once the far end gives up), and new connections are accepted but
get nothing through. restore() lets traffic flow again on every connection, old and new.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

from tests.support.ports import free_port


class CutProxy:
    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.host, self.target_port = host, target_port
        self.port = free_port()
        self.url = f"http://{host}:{self.port}"
        self.loop = asyncio.new_event_loop()
        self.flowing: asyncio.Event | None = None
        self.thrown = 0  # bytes thrown away while cut
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None

    def start(self) -> CutProxy:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self.loop).result(timeout=10)
        return self

    async def _listen(self) -> None:
        self.flowing = asyncio.Event()
        self.flowing.set()
        self._server = await asyncio.start_server(self._connection, self.host, self.port)

    async def _connection(self, down_r, down_w) -> None:
        try:
            up_r, up_w = await asyncio.open_connection(self.host, self.target_port)
        except OSError:
            down_w.close()
            return
        await asyncio.gather(self._pump(down_r, up_w), self._pump(up_r, down_w))

    async def _pump(self, reader, writer) -> None:
        try:
            while data := await reader.read(65536):
                if not self.flowing.is_set():
                    self.thrown += len(data)
                    continue
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    def cut(self) -> None:
        self.loop.call_soon_threadsafe(self.flowing.clear)

    def restore(self) -> None:
        self.loop.call_soon_threadsafe(self.flowing.set)

    def stop(self) -> None:
        async def close() -> None:
            self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(close(), self.loop).result(timeout=5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)

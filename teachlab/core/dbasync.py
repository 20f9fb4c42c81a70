"""Database work for sockets and hubs, off the event loop and not in one shared thread.

Channels' `database_sync_to_async` is thread-sensitive: outside a request (Django gives each
HTTP request a context of its own) every call in the process runs in one thread, so all
sockets' database work queued behind each other. At 300 clients the soak's votes, guesses and
run-socket handshakes waited up to 15 s in that queue while the pages kept moving
(docs/measurements/history/soak.md). Here each call goes to a thread of the process's own
pool (db_executor), takes a pooled connection and gives it back (close_old_connections before
and after, as channels does). Nothing here keeps thread-local state between calls: each call
is its own transaction.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

from asgiref.sync import sync_to_async
from channels.consumer import get_handler_name
from channels.middleware import BaseMiddleware
from django.conf import settings
from django.db import close_old_connections

from teachlab.core.dbbusy import database_unavailable
from teachlab.core.socketnames import CLOSE_TRY_AGAIN

log = logging.getLogger(__name__)


def db_async(func):
    """`await db_async(f)(...)`: f in one of the process's database threads, connections closed.

    Closed inside the call, not around it as channels does: the call runs in a copy of the
    caller's context, and that is where Django keeps the connection it opened."""

    @functools.wraps(func)
    def closing(*args, **kwargs):
        close_old_connections()
        try:
            return func(*args, **kwargs)
        finally:
            close_old_connections()

    @functools.wraps(func)
    async def call(*args, **kwargs):
        # The executor is looked up per call: a function wrapped at import in a server's
        # parent process is called in each forked worker.
        hop = sync_to_async(closing, thread_sensitive=False, executor=db_executor())
        return await hop(*args, **kwargs)

    return call


_executors: dict[int, ThreadPoolExecutor] = {}


def db_executor() -> ThreadPoolExecutor:
    """This process's threads for db_async (settings.DB_ASYNC_THREADS), not the loop's default
    executor. Django logs every 4xx and 5xx answer in that one while the request still holds
    its connection, and it has only cores + 4 threads: when they all waited for a pooled
    connection, such requests could not finish and give theirs back, and the soak stalled
    until the pool's timeouts broke the circle (docs/measurements/history/soak.md). Keyed by
    process id, so a forked server worker makes its own."""
    pid = os.getpid()
    executor = _executors.get(pid)
    if executor is None:
        executor = _executors[pid] = ThreadPoolExecutor(
            max_workers=settings.DB_ASYNC_THREADS, thread_name_prefix="db-async"
        )
    return executor


async def db_redraw(func, *args, tries: int = 3, pause: float = 1.0, **kwargs):
    """For a redraw that runs on its own (a count, a presenter panel): f through db_async,
    tried again after a pause when the database is busy, then given up with a warning and
    None. A redraw has no one to answer to, so an error left in its task was lost unseen
    ("Task exception was never retrieved"); the next change redraws it anyway."""
    for attempt in range(1, tries + 1):
        try:
            return await db_async(func)(*args, **kwargs)
        except Exception as exc:
            if not database_unavailable(exc):
                raise
            if attempt == tries:
                log.warning("redraw %s given up: the database did not answer: %s", func, exc)
                return None
            await asyncio.sleep(pause)
    return None


# The layer alias of sockets fed by their process's hub (settings.CHANNEL_LAYERS): an
# in-process layer, so Channels' per-consumer channel stays in memory and subscribes nothing.
HUB_FED_LAYER = "hub-fed"


class HubFed:
    """A socket whose messages come from its process's hub (lab/live/hub.py, lab/live/reader.py,
    workshop/hub.py), not from a channel of its own. Channels opens a channel on the
    consumer's layer for every socket (AsyncConsumer.__call__); on the project's Redis layer
    that is one subscription per socket that nothing reads, so these name the in-process
    layer: 300 sockets cost the hub's one subscription, not 300."""

    channel_layer_alias = HUB_FED_LAYER


class NoHopDispatch:
    """Channels' dispatch without its hop to the one shared thread before every handler
    (channels.db.aclose_old_connections, handshakes included); every database call of these
    consumers goes through db_async, which closes stale connections in its own hop.

    Channels' public surface has no way to skip that hop, and it cannot stay: a handshake
    then waits behind whatever holds the shared thread (2 s behind one slow call in
    tests/workshop/test_sockets.py::test_a_handshake_does_not_wait_behind_other_sockets_
    database_work; 15 s at 300 clients, docs/measurements/history/drills.md). So this one
    method is overridden, keeping Channels' handler naming (get_handler_name)."""

    async def dispatch(self, message) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        try:
            await handler(message)
        except Exception as exc:
            # A database that is locked, away, or out of pooled connections (psycopg_pool's
            # timeout) is "not now", as for pages (dbbusy.py): the socket says so or closes
            # to be reconnected, instead of dying with "Exception in ASGI application".
            if not database_unavailable(exc):
                raise
            log.warning("%s: the database did not answer: %s", type(self).__name__, exc)
            if message["type"] != "websocket.disconnect":
                await self.database_busy(message)

    async def database_busy(self, message) -> None:
        """After a database error: close with 1013, so the client reconnects and catches up."""
        await self.close(code=CLOSE_TRY_AGAIN)


def _session_user(session):
    """The session's user by Django's own rules: auth.get_user reads only the request's
    session (a login the password change logged out is flushed, as for pages)."""
    from django.contrib.auth import get_user

    return get_user(SimpleNamespace(session=session))


class SocketAuthMiddleware(BaseMiddleware):
    """What Channels' AuthMiddleware does (the session's user in scope["user"]), with the
    lookup through db_async: in Channels' it ran in the one shared thread, and every handshake
    waited there behind every socket's database work (docs/measurements/history/drills.md)."""

    async def __call__(self, scope, receive, send):
        if "session" not in scope:
            raise ValueError("SocketAuthMiddleware needs Channels' SessionMiddleware above it.")
        user = await db_async(_session_user)(scope["session"])
        return await super().__call__({**scope, "user": user}, receive, send)


def socket_auth(inner):
    return SocketAuthMiddleware(inner)

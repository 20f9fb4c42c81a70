"""Database work for sockets and hubs, off the event loop and not in one shared thread.

Channels' `database_sync_to_async` is thread-sensitive: outside a request (Django gives each
HTTP request a context of its own) every call in the process runs in one thread, so all
sockets' database work queued behind each other. At 300 clients the soak's votes, guesses and
run-socket handshakes waited up to 15 s in that queue while the pages kept moving (README,
"Soak"). Here each call goes to the loop's thread pool, takes a pooled connection and gives it
back (close_old_connections before and after, as channels does). Nothing here keeps
thread-local state between calls: each call is its own transaction.
"""

from __future__ import annotations

import functools

from asgiref.sync import sync_to_async
from channels.consumer import get_handler_name
from django.db import close_old_connections


def db_async(func):
    """`await db_async(f)(...)`: f in a worker thread of the loop's pool, connections closed.

    Closed inside the call, not around it as channels does: the call runs in a copy of the
    caller's context, and that is where Django keeps the connection it opened."""

    @functools.wraps(func)
    def closing(*args, **kwargs):
        close_old_connections()
        try:
            return func(*args, **kwargs)
        finally:
            close_old_connections()

    return sync_to_async(closing, thread_sensitive=False)


class NoHopDispatch:
    """Channels' dispatch without its database hop per message (it closes stale connections
    in the one shared thread before every handler, handshakes included); every database call
    of these consumers goes through db_async, which closes them in its own hop."""

    async def dispatch(self, message) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)


def socket_auth(inner):
    """Channels' AuthMiddleware with its user lookup through db_async: every handshake looked
    its user up in the one shared thread, behind every socket's database work."""
    from channels.auth import AuthMiddleware, get_user

    class SocketAuthMiddleware(AuthMiddleware):
        async def resolve_scope(self, scope) -> None:
            scope["user"]._wrapped = await db_async(get_user.func)(scope)

    return SocketAuthMiddleware(inner)

"""Threads that use the database give their connection back: before they wait, and when they end.

Django gives a thread one connection and keeps it until the thread closes it. With the
PostgreSQL pool (settings, TEACHLAB_DB_POOL_SIZE) a thread that sleeps or polls while holding
one keeps it from everybody else: the experiments' run, feeder and heartbeat threads, a dozen at
once in a batch, held the pool's ten and the rest waited until "couldn't get a connection"
(CI, the 18 experiments). Returned between polls, a connection serves them all in turn.
"""

from __future__ import annotations

import asyncio
import functools
import os
import weakref
from concurrent.futures import ThreadPoolExecutor

from django.db import close_old_connections, connections


def connection_release() -> None:
    """Before a wait: this thread's connection goes back to the pool (closed without one).

    close_old_connections closes it because CONN_MAX_AGE is 0 with the pool; a process that
    keeps its connection on purpose (the monitor, CONN_MAX_AGE 600 without a pool) keeps it."""
    close_old_connections()


def closes_connections(func):
    """For a thread's target: close this thread's connections when it returns. A pooled
    connection that a finished thread never closed stays checked out for good (the batch of
    18 experiments ended 18 threads that way, and the pool holds 10)."""

    @functools.wraps(func)
    def run(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        finally:
            connections.close_all()

    return run


def pooled_connections_return() -> None:
    """Once a request's middleware chain has answered: this thread's pooled connections go
    back to the pool (syncchain.py). Only pooled ones (without a pool, holding
    a connection keeps nobody waiting) and none inside a transaction (an atomic view's, a
    test's): the next query takes one from the pool again."""
    for conn in connections.all(initialized_only=True):
        if conn.in_atomic_block or not conn.settings_dict.get("OPTIONS", {}).get("pool"):
            continue
        conn.close()


def _returning(fn, /, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    finally:
        pooled_connections_return()


class ConnectionReturningExecutor(ThreadPoolExecutor):
    """The event loop's default executor, with each call's pooled connections given back when
    it returns. Django runs request work there: the error page of a view's exception
    (response_for_exception, which reads the session for the page's header) and the log line
    of every 4xx and 5xx answer. Nothing closed a connection such a call took: it stayed with
    that executor thread, out of the pool, and the pool's ten went to a handful of idle threads."""

    def submit(self, fn, /, *args, **kwargs):
        return super().submit(_returning, fn, *args, **kwargs)


_loops_done: weakref.WeakSet = weakref.WeakSet()


class ReturningDefaultExecutor:
    """ASGI wrapper: the first request on an event loop makes that loop's default executor a
    ConnectionReturningExecutor (as many threads as asyncio's own default)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        loop = asyncio.get_running_loop()
        if loop not in _loops_done:
            _loops_done.add(loop)
            threads = min(32, (os.cpu_count() or 1) + 4)
            loop.set_default_executor(ConnectionReturningExecutor(max_workers=threads))
        return await self.app(scope, receive, send)

"""Threads that use the database give their connection back: before they wait, and when they end.

Django gives a thread one connection and keeps it until the thread closes it. With the
PostgreSQL pool (settings, TEACHLAB_DB_POOL_SIZE) a thread that sleeps or polls while holding
one keeps it from everybody else: the experiments' run, feeder and heartbeat threads, a dozen at
once in a batch, held the pool's ten and the rest waited until "couldn't get a connection"
(CI, the 18 experiments). Returned between polls, a connection serves them all in turn.
"""

from __future__ import annotations

import functools

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
    """Mid-request, before the request waits on the event loop: this thread's pooled
    connections go back to the pool (syncchain.py). Only pooled ones (without a pool, holding
    a connection keeps nobody waiting) and none inside a transaction (an atomic view's, a
    test's): the next query takes one from the pool again."""
    for conn in connections.all(initialized_only=True):
        if conn.in_atomic_block or not conn.settings_dict.get("OPTIONS", {}).get("pool"):
            continue
        conn.close()

"""The middleware chain runs in the request's thread: one hop from the event loop into a
thread for the chain, not one per middleware (teachlab/core/syncchain.py)."""

from __future__ import annotations

import pytest
from asgiref.sync import SyncToAsync
from asgiref.testing import ApplicationCommunicator
from django.core.handlers.asgi import ASGIHandler

from teachlab.core.dbthreads import ReturningDefaultExecutor
from tests.stack import run_async

pytestmark = pytest.mark.django_db(transaction=True)


async def _get(path: str, cookie: bytes = b"") -> int:
    """One GET through Django's own ASGI handler (which, unlike the test client, gives the
    request's connection back when the request finishes)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1")] + ([(b"cookie", cookie)] if cookie else []),
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }
    comm = ApplicationCommunicator(ReturningDefaultExecutor(ASGIHandler()), scope)
    await comm.send_input({"type": "http.request", "body": b"", "more_body": False})
    start = await comm.receive_output(timeout=30)
    while (await comm.receive_output(timeout=30)).get("more_body"):
        pass
    await comm.wait(timeout=30)
    return start["status"]


@pytest.mark.parametrize("path", ["/", "/quiz/"])
def test_a_page_takes_a_few_thread_hops_not_one_per_middleware(path, monkeypatch):
    hops: list[str] = []
    real = SyncToAsync.__call__

    async def counting(self, *args, **kwargs):
        hops.append(getattr(self.func, "__qualname__", repr(self.func)))
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counting)
    assert run_async(_get(path)) == 200
    # The chain, CSRF's process_view, the view, the request_started and request_finished
    # signals: a handful. Without the sync-only middleware last, each MiddlewareMixin
    # middleware's process_request and process_response hopped on its own (17 on "/").
    assert len(hops) <= 6, hops


def test_a_request_holds_no_pooled_connection_while_django_logs_its_answer(monkeypatch):
    """Django renders a view's exception and logs a 4xx/5xx answer in the loop's default
    executor. The request's own connection (the view read a run) and the one the error page
    took in that executor (its header reads the session) are both back in the pool by the
    time the answer is logged: held, they left the pool short (the soak's stalls)."""
    from django.contrib.auth import get_user_model
    from django.core.handlers import base
    from django.db import connection
    from django.test import Client

    if connection.vendor != "postgresql" or connection.pool is None:
        pytest.skip("the pool is PostgreSQL's; this run is on SQLite")
    user = get_user_model().objects.create_user("pool-holder", password="x" * 12)
    client = Client()
    client.force_login(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()

    def checked_out() -> int:
        stats = connection.pool.get_stats()
        return stats["pool_size"] - stats["pool_available"]

    before = checked_out()  # this test's own connection
    seen: list[int] = []
    real = base.log_response

    def logging_response(*args, **kwargs):
        seen.append(checked_out())
        return real(*args, **kwargs)

    monkeypatch.setattr(base, "log_response", logging_response)
    assert run_async(_get("/lab/runs/no-such-run/", cookie=cookie)) == 404
    assert seen == [before], f"{seen[0] - before} pooled connection(s) held while logging"

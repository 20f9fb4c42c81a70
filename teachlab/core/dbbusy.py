"""A database that is locked or away answers 503 with a message and Retry-After, not a 500.

Django turns an exception that escapes a view or a middleware into a response by calling
`handler500` inside the `except` block (django/core/handlers/exception.py,
`response_for_exception`, Django 5.2), so the exception is still `sys.exc_info()` here. An
OperationalError is the database saying "not now" (SQLite's "database is locked" after its
busy timeout, PostgreSQL's lock_timeout or a refused connection): the request's transaction
was rolled back, so nothing of it was kept and the same request can simply be sent again.
"""

from __future__ import annotations

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader

RETRY_AFTER = 5  # seconds: a lock held for a migration or a backup is usually gone by then
MESSAGE = (
    "The database is busy or unavailable right now, so nothing from this request was saved. "
    f"Try again in {RETRY_AFTER} seconds."
)

# What a socket says when a frame's database work found the database busy or away.
SOCKET_MESSAGE = "The database is busy right now, so that was not saved. Send it again in a moment."


def database_unavailable(exc: BaseException | None) -> bool:
    return isinstance(exc, OperationalError | InterfaceError)


def _wants_json(request: HttpRequest) -> bool:
    accept = request.headers.get("Accept", "")
    return request.path.endswith(".json") or (
        "application/json" in accept and "text/html" not in accept
    )


def busy_response(request: HttpRequest) -> HttpResponse:
    if _wants_json(request):
        response: HttpResponse = JsonResponse(
            {"error": "database_unavailable", "message": MESSAGE}, status=503
        )
    else:
        html = loader.render_to_string("503.html", {"message": MESSAGE})
        response = HttpResponse(html, status=503)
    response["Retry-After"] = str(RETRY_AFTER)
    response["Cache-Control"] = "no-store"
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: 503 with a message when the database said no; the usual 500 page else."""
    if database_unavailable(sys.exc_info()[1]):
        return busy_response(request)
    html = loader.render_to_string("500.html")
    return HttpResponse(html, status=500)

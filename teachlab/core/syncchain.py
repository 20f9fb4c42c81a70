"""The middleware chain runs in the request's own thread, and gives its pooled database
connections back before Django's async tail.

Django keeps a middleware that can do both in the mode of the one inside it (see
BaseHandler.load_middleware). With the view handler async under ASGI, every MiddlewareMixin
middleware then ran its process_request and process_response through sync_to_async: about
a dozen trips through the event loop per request, each waiting behind every socket's work,
while the request held a pooled database connection from its session lookup on. In the
300-client soak that held connections long enough for the pool's 10 s timeout to answer
503 (docs/measurements/history/soak.md). A sync-only middleware at the end makes the ones
outside it sync too: one trip into a thread for the chain, then the view handler as before.

After the chain a request still held its connection through Django's async tail (logging
a 4xx or 5xx answer in the loop's default executor, sending, request_finished). When the pool
ran short, such requests waited on executor threads that were themselves waiting for a
pooled connection (the sockets' work, before it had threads of its own: dbasync.py), and the
soak stalled for two minutes at a time. So the chain's first middleware gives the
connections back as soon as the chain has answered.
"""

from __future__ import annotations

from django.utils.decorators import sync_only_middleware

from teachlab.core.dbthreads import pooled_connections_return


class SyncChainMiddleware:
    """Last in MIDDLEWARE: sync only."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)


@sync_only_middleware
def connections_return_middleware(get_response):
    """First in MIDDLEWARE: once the whole chain has answered (the session saved), the
    thread's pooled connections go back before Django's async tail. A streaming answer keeps
    them: its body may still read the database."""

    def middleware(request):
        response = get_response(request)
        if not getattr(response, "streaming", False):
            pooled_connections_return()
        return response

    return middleware

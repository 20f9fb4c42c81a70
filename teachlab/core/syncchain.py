"""The last middleware: sync only, so Django runs the whole middleware chain in the
request's own thread instead of hopping between the event loop and a thread for each
middleware's request and response halves.

Django keeps a middleware that can do both in the mode of the one inside it (see
BaseHandler.load_middleware). With the view handler async under ASGI, every MiddlewareMixin
middleware then ran its process_request and process_response through sync_to_async: about
a dozen trips through the event loop per request, each waiting behind every socket's work,
while the request held a pooled database connection from its session lookup on. In the
300-client soak that held connections long enough for the pool's 10 s timeout to answer
503 (docs/measurements/history/soak.md). A sync-only middleware at the end makes the ones
outside it sync too:
one trip into a thread for the chain, then the view handler as before.
"""

from __future__ import annotations


class SyncChainMiddleware:
    sync_capable = True
    async_capable = False

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

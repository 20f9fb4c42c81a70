"""ASGI entry point: HTTP through Django, WebSockets through Channels, origin-checked
(scheme, host and port, teachlab/core/origins.py)."""

import gc
import os
import sys

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "teachlab.settings")
# Django must be set up before anything imports models (consumers do).
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.sessions import CookieMiddleware, SessionMiddleware  # noqa: E402

from teachlab.core.bodylimit import BodyLimited  # noqa: E402
from teachlab.core.cookies import NulCookiesSocket  # noqa: E402
from teachlab.core.dbasync import socket_auth  # noqa: E402
from teachlab.core.dbthreads import ReturningDefaultExecutor  # noqa: E402
from teachlab.core.origins import OriginChecked  # noqa: E402
from teachlab.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        # Static files come through WhiteNoise's middleware (settings.STATIC_ROOT). Bodies are
        # capped while they are read (teachlab/core/bodylimit.py), before Django spools them,
        # and Django's own calls in the loop's default executor give their pooled database
        # connections back (teachlab/core/dbthreads.py).
        "http": ReturningDefaultExecutor(BodyLimited(django_asgi_app)),
        "websocket": OriginChecked(
            # Channels' AuthMiddlewareStack, with NUL-bearing cookies dropped before sessions
            # and the user looked up in the database threads (teachlab/core/dbasync.py).
            CookieMiddleware(
                NulCookiesSocket(SessionMiddleware(socket_auth(URLRouter(websocket_urlpatterns))))
            )
        ),
    }
)

# In a server process (not a test process importing this module): load what the first requests
# would (every view, the template engine), then move all of it out of the collector's reach: it
# lives as long as the process. A full collection otherwise walks it all, and one landing
# mid-burst stopped every socket for 115 ms (issue 10's latency benchmark, scripts/bench_lab.py).
# And hand the GIL back to the event loop after 1 ms, not 5: pages, database calls and a run's
# redraw are drawn in threads beside the sockets. The lab's workers do both too
# (teachlab/lab/worker/signals.py).
SERVERS = ("uvicorn", "gunicorn")  # daphne is imported by every process (INSTALLED_APPS)
if any(name in sys.modules for name in SERVERS) and "pytest" not in sys.modules:
    from teachlab.core.warm import warm_up

    warm_up()
    gc.freeze()
    sys.setswitchinterval(0.001)

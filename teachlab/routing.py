"""WebSocket routes of every app, gathered in one list for asgi.py."""

from teachlab.lab.live.routing import websocket_urlpatterns as lab_ws
from teachlab.workshop.routing import websocket_urlpatterns as workshop_ws

websocket_urlpatterns = [*lab_ws, *workshop_ws]

"""WebSocket routes of the lab app."""

websocket_urlpatterns: list = []

"""WebSocket routes of the workshop app."""

websocket_urlpatterns: list = []

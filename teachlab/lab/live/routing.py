"""WebSocket routes of the lab app."""

from django.urls import re_path

from teachlab.lab.live.consumers import RunConsumer

websocket_urlpatterns = [
    re_path(r"^ws/lab/runs/(?P<run_id>[A-Za-z0-9_-]{1,64})/$", RunConsumer.as_asgi()),
]

"""WebSocket routes of the workshop app."""

from django.urls import path

from teachlab.workshop.consumers import ParticipantSocket, PresenterSocket, ScreenSocket

websocket_urlpatterns = [
    path("ws/workshop/<str:code>/", ParticipantSocket.as_asgi()),
    path("ws/workshop/<str:code>/present/", PresenterSocket.as_asgi()),
    path("ws/workshop/<str:code>/screen/", ScreenSocket.as_asgi()),
]

"""Who a workshop view serves: the room a URL names, the seat a browser holds in it, and the
gate that lets only the room's instructor (or staff) through to the console's views."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden

from teachlab.workshop import rooms, selectors
from teachlab.workshop.models import Room


def room_or_404(code: str) -> Room:
    room = selectors.room_for_code(code)
    if room is None:
        raise Http404("No workshop room has that code.")
    return room


def seat_token(request: HttpRequest, room: Room) -> str | None:
    """The seat cookie this browser holds for `room` (rooms.seat_join set it)."""
    return request.COOKIES.get(rooms.seat_cookie_name(room.code))


def seat_of(request: HttpRequest, room: Room):
    return selectors.seat_for_token(room=room, token=seat_token(request, room))


def driver_refusal(request: HttpRequest, room: Room) -> HttpResponse | None:
    """The answer to someone who may not drive the room (sign in first, or 403), else None.
    Its own function, called per request, so a mutation tool can change it (the decorator
    itself runs once, at import)."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not rooms.can_drive(user=request.user, room=room):
        return HttpResponseForbidden("Only the room's instructor can do that.")
    return None


def driver_only(view):
    """Load the room and let only its instructor (or staff) through."""

    @wraps(view)
    def wrapper(request: HttpRequest, code: str, *args, **kwargs) -> HttpResponse:
        room = room_or_404(code)
        refusal = driver_refusal(request, room)
        if refusal is not None:
            return refusal
        return view(request, room, *args, **kwargs)

    return wrapper

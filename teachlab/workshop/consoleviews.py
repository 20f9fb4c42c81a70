"""The instructor's pages: a new room, its console (every control) and its projector view.
The console's buttons are in actionviews.py."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from teachlab.workshop import fragments, rooms, screens, selectors
from teachlab.workshop.forms import RoomCreateForm
from teachlab.workshop.joinlink import join_links
from teachlab.workshop.models import Room
from teachlab.workshop.qr import qr_svg
from teachlab.workshop.viewaccess import driver_only


@require_POST
def room_create(request: HttpRequest) -> HttpResponse:
    if not rooms.can_create_rooms(user=request.user):
        if not request.user.is_authenticated:
            return redirect_to_login(reverse("workshop:index"))
        return HttpResponseForbidden("Only staff accounts can create workshop rooms.")
    form = RoomCreateForm(request.POST)
    title = form.cleaned_data["title"] if form.is_valid() else ""
    room = rooms.room_create(instructor=request.user, title=title)
    return redirect("workshop:present", code=room.code)


def _join_context(request: HttpRequest, room: Room) -> dict:
    links = join_links(
        public_url=settings.WORKSHOP_PUBLIC_URL,
        request_base=request.build_absolute_uri("/"),
        join_path=reverse("workshop:join"),
        code=room.code,
    )
    return {
        "join_url": links["join_url"],
        "join_page": links["join_page"],
        "join_loopback": links["loopback"],
        "qr": qr_svg(links["join_url"]),
    }


@require_GET
@driver_only
def present(request: HttpRequest, room: Room) -> HttpResponse:
    """The instructor console: every control; on a laptop, a phone or a second window."""
    ctx = fragments.presenter_context(room, live=True)
    ctx.update(
        ws_url=f"/ws/workshop/{room.code}/present/",
        **_join_context(request, room),
        found=selectors.seats_find(room=room),
        query="",
    )
    return render(request, fragments.PRESENTER, ctx)


@require_GET
@driver_only
def screen(request: HttpRequest, room: Room) -> HttpResponse:
    """The projector view: what the room sees, no controls, no answer before the reveal."""
    ctx = screens.screen_context(room, live=True)
    ctx.update(ws_url=f"/ws/workshop/{room.code}/screen/", **_join_context(request, room))
    return render(request, screens.PROJECTOR, ctx)

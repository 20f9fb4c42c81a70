"""A participant's pages: the lobby, joining, the room, a look around on one's own, a run's
ranking. The instructor's are in consoleviews.py, actionviews.py and resultviews.py."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from teachlab.core.identity import client_address
from teachlab.workshop import (
    content,
    fragments,
    ratelimit,
    rooms,
    roundstate,
    selectors,
    suggestions,
)
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.forms import JoinForm, RoomCreateForm, form_error
from teachlab.workshop.models import Room
from teachlab.workshop.viewaccess import room_or_404, seat_of, seat_token

SEAT_COOKIE_AGE = 60 * 60 * 24 * 7

REMOVED = (
    "The instructor removed you from this room, so this browser cannot join it again. "
    "Ask the instructor if you think that was a mistake."
)


def _removed(request: HttpRequest, room: Room) -> bool:
    return selectors.seat_removed(room=room, token=seat_token(request, room))


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    user = request.user
    ctx = {
        "join_form": JoinForm(initial={"code": request.GET.get("code", "")}),
        "suggested": suggestions.nickname_suggestions(),
        "can_create": rooms.can_create_rooms(user=user),
        "create_form": RoomCreateForm(),
        "my_rooms": Room.objects.filter(instructor=user)[:20] if user.is_authenticated else [],
    }
    return render(request, "workshop/index.html", ctx)


@require_http_methods(["GET", "POST"])
def join(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _join_posted(request)
    error, status = "", 200
    form = JoinForm(initial={"code": request.GET.get("code", "")})
    room = selectors.room_for_code(request.GET.get("code", ""))
    if room is not None and _removed(request, room):
        error, status = REMOVED, 403
    return _join_page(request, form, error, status, room=room)


def _join_posted(request: HttpRequest) -> HttpResponse:
    """A join form sent: the seat (and its cookie), or the form again with why not."""
    data = request.POST.copy()
    if taken := data.get("take", ""):
        data["nickname"] = taken  # a generated name's button ("Take “Brave Otter”")
    form = JoinForm(data)
    if not form.is_valid():
        return _join_page(request, form, form_error(form), 400)
    room = selectors.room_for_code(form.cleaned_data["code"])
    if room is None:
        error = "No workshop room has that code. Check it on the instructor's screen."
        return _join_page(request, form, error, 400)
    if seat_of(request, room) is not None:
        return redirect("workshop:room", code=room.code)  # already seated: same seat
    if _removed(request, room):
        return _join_page(request, form, REMOVED, 403, room=room)
    # Per client network (settings.WORKSHOP_JOINS_PER_ADDRESS, ratelimit.join_wait).
    if wait := ratelimit.join_wait(address=client_address(request)):
        error = f"Too many joins from your network address; try again in {wait} seconds."
        return _join_page(request, form, error, 429, room=room)
    try:
        seat = rooms.seat_join(room=room, nickname=form.cleaned_data["nickname"])
    except WorkshopError as exc:
        return _join_page(request, form, exc.message, 400, room=room)
    response = redirect("workshop:room", code=room.code)
    response.set_cookie(
        rooms.seat_cookie_name(room.code),
        seat.token,
        max_age=SEAT_COOKIE_AGE,
        httponly=True,
        samesite="Lax",
        secure=request.is_secure(),
    )
    return response


def _join_page(
    request: HttpRequest, form: JoinForm, error: str, status: int, *, room: Room | None = None
) -> HttpResponse:
    ctx = {"form": form, "error": error, "suggested": suggestions.nickname_suggestions(room=room)}
    return render(request, "workshop/join.html", ctx, status=status)


@require_GET
def room(request: HttpRequest, code: str) -> HttpResponse:
    room = room_or_404(code)
    seat = seat_of(request, room)
    if seat is None:
        return redirect(f"{reverse('workshop:join')}?code={room.code}")
    ctx = fragments.room_context(room, seat=seat, live=True)
    ctx["ws_url"] = f"/ws/workshop/{room.code}/"
    return render(request, fragments.PARTICIPANT, ctx)


@require_GET
def browse(request: HttpRequest, code: str) -> HttpResponse:
    """A participant's own look around; an empty answer means "back to the instructor"."""
    room = room_or_404(code)
    if seat_of(request, room) is None and not rooms.can_drive(user=request.user, room=room):
        return HttpResponseForbidden("Join the room first.")
    if request.GET.get("back"):
        return HttpResponse("")
    slug = request.GET.get("q") or room.question_slug
    tier = request.GET.get("tier") or "prompt"
    question = content.question(slug) or next(iter(content.questions()), None)
    if tier not in rooms.TIERS or (question and roundstate.tiers_hidden(room, question.slug)):
        tier = "prompt"  # an answer round on this question: its tiers wait for the room
    ctx = {
        "room": room,
        "questions": content.questions(),
        "tiers": content.TIER_LABELS.items(),
        "question": question,
        "tier": tier,
        "tier_label": content.TIER_LABELS[tier],
        "prompt_html": content.markdown(question.prompt) if question else "",
        "tier_html": content.markdown(question.tiers.get(tier, ""))
        if question and tier != "prompt"
        else "",
        "lesson_url": fragments.lesson_url(question, tier),
    }
    return render(request, f"{fragments.PARTICIPANT}#browse", ctx)


@require_GET
def ranking(request: HttpRequest, code: str) -> HttpResponse:
    """A page of a run's ranking, the asker's own row marked (participants and presenters)."""
    room = room_or_404(code)
    seat = seat_of(request, room)
    if seat is None and not rooms.can_drive(user=request.user, room=room):
        return HttpResponseForbidden("Join the room first.")
    run = request.GET.get("run", "")
    shared = (
        room.shared_runs.filter(pk=int(run), observed__isnull=False).first()
        if run.isascii() and run.isdigit() and len(run) < 12
        else None
    )
    if shared is None:
        return HttpResponse(fragments.error_html("That run has no outcome yet."), status=404)
    raw = request.GET.get("page", "")
    page = int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 6 else None
    return HttpResponse(fragments.ranking_html(room, shared, seat=seat, page=page))

"""Workshop pages. Views read the request, call a service in rooms/votes/predictions, render."""

from __future__ import annotations

from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from teachlab.workshop import content, fragments, predictions, results, rooms, votes
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.forms import (
    ClaimForm,
    DriveForm,
    JoinForm,
    RoomCreateForm,
    RunOpenForm,
    form_error,
)
from teachlab.workshop.joinlink import join_links
from teachlab.workshop.models import Room
from teachlab.workshop.qr import qr_svg

SEAT_COOKIE_AGE = 60 * 60 * 24 * 7


def _room_or_404(code: str) -> Room:
    room = rooms.room_for_code(code)
    if room is None:
        raise Http404("No workshop room has that code.")
    return room


def _seat(request: HttpRequest, room: Room):
    return rooms.seat_for_token(
        room=room, token=request.COOKIES.get(rooms.seat_cookie_name(room.code))
    )


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    user = request.user
    ctx = {
        "join_form": JoinForm(initial={"code": request.GET.get("code", "")}),
        "can_create": rooms.can_create_rooms(user=user),
        "create_form": RoomCreateForm(),
        "my_rooms": Room.objects.filter(instructor=user)[:20] if user.is_authenticated else [],
    }
    return render(request, "workshop/index.html", ctx)


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


@require_http_methods(["GET", "POST"])
def join(request: HttpRequest) -> HttpResponse:
    error = ""
    if request.method == "POST":
        form = JoinForm(request.POST)
        if form.is_valid():
            room = rooms.room_for_code(form.cleaned_data["code"])
            if room is None:
                error = "No workshop room has that code. Check it on the instructor's screen."
            elif _seat(request, room) is not None:
                return redirect("workshop:room", code=room.code)  # already seated: same seat
            else:
                try:
                    seat = rooms.seat_join(room=room, nickname=form.cleaned_data["nickname"])
                except WorkshopError as exc:
                    error = exc.message
                else:
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
        else:
            error = form_error(form)
    else:
        form = JoinForm(initial={"code": request.GET.get("code", "")})
    status = 400 if error else 200
    return render(request, "workshop/join.html", {"form": form, "error": error}, status=status)


@require_GET
def room(request: HttpRequest, code: str) -> HttpResponse:
    room = _room_or_404(code)
    seat = _seat(request, room)
    if seat is None:
        return redirect(f"{reverse('workshop:join')}?code={room.code}")
    ctx = fragments.room_context(room, seat=seat, live=True)
    ctx["ws_url"] = f"/ws/workshop/{room.code}/"
    return render(request, fragments.PARTICIPANT, ctx)


@require_GET
def browse(request: HttpRequest, code: str) -> HttpResponse:
    """A participant's own look around; an empty answer means "back to the instructor"."""
    room = _room_or_404(code)
    if _seat(request, room) is None and not rooms.can_drive(user=request.user, room=room):
        return HttpResponseForbidden("Join the room first.")
    if request.GET.get("back"):
        return HttpResponse("")
    slug = request.GET.get("q") or room.question_slug
    tier = request.GET.get("tier") or "prompt"
    question = content.question(slug) or next(iter(content.questions()), None)
    if tier not in rooms.TIERS:
        tier = "prompt"
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
        room = _room_or_404(code)
        refusal = driver_refusal(request, room)
        if refusal is not None:
            return refusal
        return view(request, room, *args, **kwargs)

    return wrapper


@require_GET
@driver_only
def present(request: HttpRequest, room: Room) -> HttpResponse:
    ctx = fragments.room_context(room, live=True)
    links = join_links(
        public_url=settings.WORKSHOP_PUBLIC_URL,
        request_base=request.build_absolute_uri("/"),
        join_path=reverse("workshop:join"),
        code=room.code,
    )
    ctx.update(
        ws_url=f"/ws/workshop/{room.code}/present/",
        join_url=links["join_url"],
        join_page=links["join_page"],
        join_loopback=links["loopback"],
        qr=qr_svg(links["join_url"]),
        **fragments.presenter_extras(room),
    )
    return render(request, fragments.PRESENTER, ctx)


def _acted(request: HttpRequest, room: Room, parts: list[str], error: str = "") -> HttpResponse:
    """htmx: the presenter's changed parts as out-of-band swaps; otherwise back to the page."""
    if not request.htmx:
        if error:
            return render(
                request, "workshop/error.html", {"room": room, "error": error}, status=400
            )
        return redirect("workshop:present", code=room.code)
    room.refresh_from_db()
    if error:
        return HttpResponse(fragments.error_html(error))
    return HttpResponse(fragments.presenter_html(room, [*parts, "error"]))


def driver_action(parts: list[str]):
    def decorate(action):
        @wraps(action)
        @require_POST
        @driver_only
        def view(request: HttpRequest, room: Room) -> HttpResponse:
            try:
                action(request, room)
            except WorkshopError as exc:
                return _acted(request, room, parts, exc.message)
            return _acted(request, room, parts)

        return view

    return decorate


@driver_action(["stage", "claims"])
def drive(request: HttpRequest, room: Room) -> None:
    form = DriveForm(request.POST)
    if not form.is_valid():
        raise WorkshopError(form_error(form))
    rooms.room_drive(
        room=room, question_slug=form.cleaned_data["question"], tier=form.cleaned_data["tier"]
    )


@driver_action(["claim"])
def claim(request: HttpRequest, room: Room) -> None:
    form = ClaimForm(request.POST)
    if not form.is_valid():
        raise WorkshopError(form_error(form))
    votes.claim_open(room=room, claim_key=form.cleaned_data["claim"])


@driver_action(["claim"])
def reveal(request: HttpRequest, room: Room) -> None:
    votes.claim_reveal(room=room)


@driver_action(["run"])
def run_open(request: HttpRequest, room: Room) -> None:
    form = RunOpenForm(request.POST)
    if not form.is_valid():
        raise WorkshopError(form_error(form))
    data = form.cleaned_data
    predictions.shared_run_open(
        room=room,
        experiment_slug=data["experiment"],
        lane=data["lane"],
        params={k: data[k] for k in predictions.ROOM_PARAMS},
        prompt=data["prompt"],
        metric=data["metric"],
    )


@driver_action(["run"])
def fire(request: HttpRequest, room: Room) -> None:
    predictions.shared_run_fire(room=room, instructor=request.user)


@driver_action(["run"])
def outcome(request: HttpRequest, room: Room) -> None:
    shared = room.shared_run
    if shared is None or not shared.run_id:
        raise WorkshopError("Fire a run first.")
    if shared.observed is None and not predictions.shared_run_finish(shared=shared):
        raise WorkshopError("The lab has no summary for this run yet.")


@driver_action(["ended"])
def close(request: HttpRequest, room: Room) -> None:
    rooms.room_close(room=room)


@require_GET
@driver_only
def results_page(request: HttpRequest, room: Room) -> HttpResponse:
    ctx = {
        "room": room,
        "participants": results.participant_rows(room),
        "claims": results.claim_rows(room),
        "runs": results.run_rows(room),
    }
    return render(request, "workshop/results.html", ctx)


@require_GET
@driver_only
def results_csv(request: HttpRequest, room: Room, kind: str) -> HttpResponse:
    if kind not in results.EXPORTS:
        raise Http404("Exports: participants, claims, runs.")
    rows_for, columns = results.EXPORTS[kind]
    response = HttpResponse(results.rows_csv(rows_for(room), columns), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="workshop-{room.code}-{kind}.csv"'
    return response

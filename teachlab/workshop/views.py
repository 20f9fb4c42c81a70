"""Workshop pages. Views read the request, call a service in rooms/votes/predictions, render."""

from __future__ import annotations

from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from teachlab.identity import client_address
from teachlab.workshop import (
    content,
    fragments,
    predictions,
    presenting,
    ratelimit,
    results,
    rooms,
    roundstate,
    screens,
    selectors,
    suggestions,
)
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.forms import (
    AnswerRoundForm,
    AnswerShowForm,
    ClaimForm,
    DriveForm,
    JoinForm,
    RenameForm,
    RoomCreateForm,
    RunOpenForm,
    ShowForm,
    TimerForm,
    form_error,
)
from teachlab.workshop.joinlink import join_links
from teachlab.workshop.models import Room
from teachlab.workshop.qr import qr_svg

SEAT_COOKIE_AGE = 60 * 60 * 24 * 7


def _room_or_404(code: str) -> Room:
    room = selectors.room_for_code(code)
    if room is None:
        raise Http404("No workshop room has that code.")
    return room


REMOVED = (
    "The instructor removed you from this room, so this browser cannot join it again. "
    "Ask the instructor if you think that was a mistake."
)


def _removed(request: HttpRequest, room: Room) -> bool:
    return selectors.seat_removed(
        room=room, token=request.COOKIES.get(rooms.seat_cookie_name(room.code))
    )


def _seat(request: HttpRequest, room: Room):
    return selectors.seat_for_token(
        room=room, token=request.COOKIES.get(rooms.seat_cookie_name(room.code))
    )


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
    error, status = "", 200
    if request.method == "POST":
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
        if _seat(request, room) is not None:
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
    form = JoinForm(initial={"code": request.GET.get("code", "")})
    room = selectors.room_for_code(request.GET.get("code", ""))
    if room is not None and _removed(request, room):
        error, status = REMOVED, 403
    return _join_page(request, form, error, status, room=room)


def _join_page(
    request: HttpRequest, form: JoinForm, error: str, status: int, *, room: Room | None = None
) -> HttpResponse:
    ctx = {"form": form, "error": error, "suggested": suggestions.nickname_suggestions(room=room)}
    return render(request, "workshop/join.html", ctx, status=status)


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


def _posted(form_class, request: HttpRequest):
    """A presenter action's form, bound and valid, or a WorkshopError with its first problem."""
    form = form_class(request.POST)
    if not form.is_valid():
        raise WorkshopError(form_error(form))
    return form


def _form_fields(form_class):
    return lambda request: _posted(form_class, request).cleaned_data


def _run_fields(request: HttpRequest) -> dict:
    data = _posted(RunOpenForm, request).cleaned_data
    return {**data, "params": {k: data[k] for k in predictions.ROOM_PARAMS}}


def _state_field(request: HttpRequest) -> dict:
    return {"state": request.POST.get("state", "")}


def driver_view(action: str, fields_of=None):
    """A console button's view: one of presenting.ACTIONS, the same path the presenter
    socket's frames take (consumers.PresenterSocket.act)."""

    @require_POST
    @driver_only
    def view(request: HttpRequest, room: Room) -> HttpResponse:
        try:
            fields = fields_of(request) if fields_of else {}
            parts = presenting.act(room=room, action=action, fields=fields, user=request.user)
        except WorkshopError as exc:
            return _acted(request, room, presenting.parts_of(action), exc.message)
        return _acted(request, room, parts)

    view.__name__ = view.__qualname__ = action
    return view


drive = driver_view("drive", _form_fields(DriveForm))
claim = driver_view("claim", _form_fields(ClaimForm))
reveal = driver_view("reveal")
run_open = driver_view("run", _run_fields)
fire = driver_view("fire")
outcome = driver_view("outcome")
timer = driver_view("timer", _form_fields(TimerForm))
spread = driver_view("spread", _form_fields(ShowForm))
answers_open = driver_view("answers_open", _form_fields(AnswerRoundForm))
answers_end = driver_view("answers_end")
answer_show = driver_view("answer_show", _form_fields(AnswerShowForm))
close = driver_view("close")
# Session plans: Next and Previous apply a step through the services the buttons above call.
plan_next = driver_view("plan_next")
plan_previous = driver_view("plan_previous")
# The console's B key: blank the projector, or bring it back.
blank = driver_view("blank", _state_field)


@require_GET
def ranking(request: HttpRequest, code: str) -> HttpResponse:
    """A page of a run's ranking, the asker's own row marked (participants and presenters)."""
    room = _room_or_404(code)
    seat = _seat(request, room)
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


def _moderated(request: HttpRequest, room: Room, error: str = "") -> HttpResponse:
    """htmx: the moderation panel's changed parts; otherwise back to the presenter page."""
    if not request.htmx:
        if error:
            return render(
                request, "workshop/error.html", {"room": room, "error": error}, status=400
            )
        return redirect("workshop:present", code=room.code)
    room.refresh_from_db()
    query = request.POST.get("q", "") or request.GET.get("q", "")
    html = fragments.moderation_html(room, ["status", "seat_rows"], query=query)
    return HttpResponse(html + fragments.error_html(error))


def moderation_view(action: str, fields_of=None):
    """A POST from the moderation panel (CSRF by Django's middleware, instructor or staff),
    through presenting.act like every other presenter action."""

    @require_POST
    @driver_only
    def view(request: HttpRequest, room: Room, seat_id: int | None = None) -> HttpResponse:
        try:
            fields = fields_of(request) if fields_of else {}
            if seat_id is not None:
                fields["seat"] = seat_id
            presenting.act(room=room, action=action, fields=fields, user=request.user)
        except WorkshopError as exc:
            return _moderated(request, room, exc.message)
        return _moderated(request, room)

    view.__name__ = view.__qualname__ = action
    return view


def _rename_fields(request: HttpRequest) -> dict:
    return {"nickname": _posted(RenameForm, request).cleaned_data["nickname"]}


lock = moderation_view("lock", _state_field)
leaderboard = moderation_view("leaderboard", _state_field)
seat_kick = moderation_view("kick")
seat_readmit = moderation_view("readmit")
seat_rename = moderation_view("rename", _rename_fields)


@require_GET
@driver_only
def seats(request: HttpRequest, room: Room) -> HttpResponse:
    """The moderation panel's seat list, filtered by name (htmx, as the instructor types)."""
    query = request.GET.get("q", "")[:40]
    return HttpResponse(fragments.moderation_html(room, ["seat_rows"], query=query))


@require_GET
@driver_only
def results_page(request: HttpRequest, room: Room) -> HttpResponse:
    ctx = {
        "room": room,
        "participants": results.participant_rows(room),
        "claims": results.claim_rows(room),
        "runs": results.run_rows(room),
        "standings": results.score_rows(room),
    }
    return render(request, "workshop/results.html", ctx)


@require_GET
@driver_only
def results_csv(request: HttpRequest, room: Room, kind: str) -> HttpResponse:
    if kind not in results.EXPORTS:
        raise Http404(f"Exports: {', '.join(results.EXPORTS)}.")
    rows_for, columns = results.EXPORTS[kind]
    response = HttpResponse(
        results.rows_csv(rows_for(room), columns), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="workshop-{room.code}-{kind}.csv"'
    return response

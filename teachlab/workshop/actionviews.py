"""The console's buttons and the moderation panel's: one view per presenter action, each a POST
(CSRF by Django's middleware, instructor or staff) through presenting.act, the same path the
presenter socket's frames take (consumers.PresenterSocket.act)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from teachlab.workshop import fragments, predictions, presenting
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.forms import (
    AnswerRoundForm,
    AnswerShowForm,
    ClaimForm,
    DriveForm,
    RenameForm,
    RunOpenForm,
    ShowForm,
    TimerForm,
    form_error,
)
from teachlab.workshop.models import Room
from teachlab.workshop.viewaccess import driver_only

# --- a button's fields, checked for shape before presenting.act checks their meaning ---


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


def _rename_fields(request: HttpRequest) -> dict:
    return {"nickname": _posted(RenameForm, request).cleaned_data["nickname"]}


# --- what a button's POST is answered with ---


def _without_htmx(request: HttpRequest, room: Room, error: str) -> HttpResponse:
    """A plain form POST (no script): back to the console, or a page saying what went wrong."""
    if error:
        return render(request, "workshop/error.html", {"room": room, "error": error}, status=400)
    return redirect("workshop:present", code=room.code)


def _console_answer(request: HttpRequest, room: Room, parts: list[str], error: str = ""):
    """htmx: the presenter's changed parts as out-of-band swaps; otherwise back to the page."""
    if not request.htmx:
        return _without_htmx(request, room, error)
    room.refresh_from_db()
    if error:
        return HttpResponse(fragments.error_html(error))
    return HttpResponse(fragments.presenter_html(room, [*parts, "error"]))


def _panel_answer(request: HttpRequest, room: Room, parts: list[str], error: str = ""):
    """htmx: the moderation panel's changed parts; otherwise back to the presenter page."""
    if not request.htmx:
        return _without_htmx(request, room, error)
    room.refresh_from_db()
    query = request.POST.get("q", "") or request.GET.get("q", "")
    html = fragments.moderation_html(room, ["status", "seat_rows"], query=query)
    return HttpResponse(html + fragments.error_html(error))


def action_view(action: str, fields_of=None, *, answer=_console_answer):
    """A button's view: one of presenting.ACTIONS, its fields read by `fields_of`, answered
    by `answer` (the console's parts, or the moderation panel's). A seat in the URL is the
    seat the action is about."""

    @require_POST
    @driver_only
    def view(request: HttpRequest, room: Room, seat_id: int | None = None) -> HttpResponse:
        try:
            fields = fields_of(request) if fields_of else {}
            if seat_id is not None:
                fields["seat"] = seat_id
            parts = presenting.act(room=room, action=action, fields=fields, user=request.user)
        except WorkshopError as exc:
            return answer(request, room, [], exc.message)
        return answer(request, room, parts)

    view.__name__ = view.__qualname__ = action
    return view


drive = action_view("drive", _form_fields(DriveForm))
claim = action_view("claim", _form_fields(ClaimForm))
reveal = action_view("reveal")
run_open = action_view("run", _run_fields)
fire = action_view("fire")
outcome = action_view("outcome")
timer = action_view("timer", _form_fields(TimerForm))
spread = action_view("spread", _form_fields(ShowForm))
answers_open = action_view("answers_open", _form_fields(AnswerRoundForm))
answers_end = action_view("answers_end")
answer_show = action_view("answer_show", _form_fields(AnswerShowForm))
close = action_view("close")
# Session plans: Next and Previous apply a step through the services the buttons above call.
plan_next = action_view("plan_next")
plan_previous = action_view("plan_previous")
# The console's B key: blank the projector, or bring it back.
blank = action_view("blank", _state_field)

# The moderation panel: it redraws itself, not the console.
lock = action_view("lock", _state_field, answer=_panel_answer)
leaderboard = action_view("leaderboard", _state_field, answer=_panel_answer)
seat_kick = action_view("kick", answer=_panel_answer)
seat_readmit = action_view("readmit", answer=_panel_answer)
seat_rename = action_view("rename", _rename_fields, answer=_panel_answer)


@require_GET
@driver_only
def seats(request: HttpRequest, room: Room) -> HttpResponse:
    """The moderation panel's seat list, filtered by name (htmx, as the instructor types)."""
    query = request.GET.get("q", "")[:40]
    return HttpResponse(fragments.moderation_html(room, ["seat_rows"], query=query))

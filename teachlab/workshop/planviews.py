"""Session plan pages: list, create, edit, delete, export, import, and a room from a plan.

Only the plan's owner sees or changes it (a staff account, as rooms need); someone else's
plan is a 404, so its number says nothing. CSRF is Django's middleware on every POST.
"""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from teachlab.workshop import content, planformat, planrun, plans, plansteps, predictions, rooms
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import Plan

PLANS = "workshop/plans.html"
PLAN = "workshop/plan.html"


def _refusal(request: HttpRequest) -> HttpResponse | None:
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not rooms.can_create_rooms(user=request.user):
        return HttpResponseForbidden("Session plans need a staff account, as rooms do.")
    return None


def instructor_only(view):
    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        return _refusal(request) or view(request, *args, **kwargs)

    return wrapper


def owner_only(view):
    """Load the user's own plan `pk` (404 for anyone else's) and pass it on."""

    @wraps(view)
    @instructor_only
    def wrapper(request: HttpRequest, pk: int, *args, **kwargs) -> HttpResponse:
        plan = plans.plan_for(user=request.user, pk=pk)
        if plan is None:
            raise Http404("You have no session plan with that number.")
        return view(request, plan, *args, **kwargs)

    return wrapper


def _list_page(request: HttpRequest, error: str = "", status: int = 200) -> HttpResponse:
    ctx = {"plans": Plan.objects.owned_by(request.user), "error": error}
    return render(request, PLANS, ctx, status=status)


@require_GET
@instructor_only
def plan_list(request: HttpRequest) -> HttpResponse:
    return _list_page(request)


@require_POST
@instructor_only
def plan_new(request: HttpRequest) -> HttpResponse:
    try:
        plan = plans.plan_create(owner=request.user, title=request.POST.get("title", ""))
    except WorkshopError as exc:
        return _list_page(request, exc.message, 400)
    return redirect("workshop:plan", pk=plan.pk)


@require_POST
@instructor_only
def plan_import(request: HttpRequest) -> HttpResponse:
    upload = request.FILES.get("file")
    if upload is None:
        return _list_page(request, "Choose a plan file (.json) to import.", 400)
    if upload.size > planformat.MAX_FILE_BYTES:
        error = f"A plan file is at most {planformat.MAX_FILE_BYTES // 1024} KiB."
        return _list_page(request, error, 400)
    try:
        plan = plans.plan_import(
            owner=request.user, data=upload.read(planformat.MAX_FILE_BYTES + 1)
        )
    except WorkshopError as exc:
        return _list_page(request, f"Not imported. {exc.message}", 400)
    return redirect("workshop:plan", pk=plan.pk)


def _plan_context(plan: Plan, error: str = "") -> dict:
    questions = list(content.questions())
    return {
        "plan": plan,
        "steps": [
            {"index": n, "number": n + 1, "label": plansteps.step_label(s), "kind": s["kind"]}
            for n, s in enumerate(plan.steps)
        ],
        "error": error,
        "questions": questions,
        "tiers": list(content.TIER_LABELS.items()),
        "lanes": content.lanes(),
        "metrics": list(content.METRICS.items()),
    }


@require_GET
@owner_only
def plan_edit(request: HttpRequest, plan: Plan) -> HttpResponse:
    return render(request, PLAN, _plan_context(plan))


def _edited(request: HttpRequest, plan: Plan, error: str = "") -> HttpResponse:
    """htmx: the step list (and its message) redrawn; otherwise back to the plan's page."""
    if request.htmx:
        return render(request, f"{PLAN}#steps", _plan_context(plan, error))
    if error:
        return render(request, PLAN, _plan_context(plan, error), status=400)
    return redirect("workshop:plan", pk=plan.pk)


def plan_action(action):
    @wraps(action)
    @require_POST
    @owner_only
    def view(request: HttpRequest, plan: Plan, **kwargs) -> HttpResponse:
        try:
            action(request, plan, **kwargs)
        except WorkshopError as exc:
            plan.refresh_from_db()
            return _edited(request, plan, exc.message)
        return _edited(request, plan)

    return view


def step_from_form(post) -> dict:
    """A step as the edit page's forms post it (strings; a ticked box is "on")."""
    kind = post.get("kind", "")
    fields = planformat.FIELDS.get(kind, set())
    raw: dict = {"kind": kind}
    for name in fields - {"params"}:
        raw[name] = post.get(name, "")
    if "params" in fields:
        raw["params"] = {
            name: (True if post.get(name) == "on" else post.get(name, ""))
            for name in predictions.ROOM_PARAMS
            if post.get(name, "").strip()
        }
    return raw


@plan_action
def plan_title(request: HttpRequest, plan: Plan) -> None:
    plans.plan_retitle(plan=plan, title=request.POST.get("title", ""))


@plan_action
def step_add(request: HttpRequest, plan: Plan) -> None:
    plans.plan_step_add(plan=plan, raw=step_from_form(request.POST))


@plan_action
def step_remove(request: HttpRequest, plan: Plan, index: int) -> None:
    plans.plan_step_remove(plan=plan, index=index)


@plan_action
def step_move(request: HttpRequest, plan: Plan, index: int) -> None:
    by = {"up": -1, "down": 1}.get(request.POST.get("to", ""))
    if by is None:
        raise WorkshopError("Move a step “up” or “down”.")
    plans.plan_step_move(plan=plan, index=index, by=by)


@require_POST
@owner_only
def plan_delete(request: HttpRequest, plan: Plan) -> HttpResponse:
    plan.delete()  # rooms started from it keep their own copy of its steps
    return redirect("workshop:plans")


@require_GET
@owner_only
def plan_export(request: HttpRequest, plan: Plan) -> HttpResponse:
    response = HttpResponse(plans.plan_export(plan=plan), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="session-plan-{plan.pk}.json"'
    return response


@require_POST
@owner_only
def plan_room(request: HttpRequest, plan: Plan) -> HttpResponse:
    try:
        room = planrun.room_from_plan(instructor=request.user, plan=plan)
    except WorkshopError as exc:
        return render(request, PLAN, _plan_context(plan, exc.message), status=400)
    return redirect("workshop:present", code=room.code)

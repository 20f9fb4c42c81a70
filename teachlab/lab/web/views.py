"""Lab pages. Views read the request, call a lab function, render; the lab's logic lives in
firing.py, reading.py, lanes.py, workers.py (the core) and history.py / export.py (the web
side); a finished run replays over its socket (consumers.py)."""

from __future__ import annotations

import redis
from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from lessons.learners import learner_for_request
from teachlab.core import ratelimits
from teachlab.core.identity import payer_of, request_network
from teachlab.lab.live.fragments import after_run_context, picture_from
from teachlab.lab.runs.celerycode import celery_code
from teachlab.lab.runs.costs import run_cost, run_estimate
from teachlab.lab.runs.errors import BROKER_NOT_ANSWERING, LabError, LabLimitError, LaneUnavailable
from teachlab.lab.runs.explain import COUNTERS
from teachlab.lab.runs.firing import run_fire
from teachlab.lab.runs.lanes import lane_get, lane_status, lanes
from teachlab.lab.runs.limits import app_redis_down, lane_load_check, run_cost_check
from teachlab.lab.runs.reading import run_events, run_for_learner, run_summary
from teachlab.lab.web import export, history
from teachlab.lab.web.forms import INITIAL, RunForm
from teachlab.lab.worker.versions import versions_text
from teachlab.lab.worker.workers import (
    controls_allowed,
    memory_restart_text,
    memory_restarts,
    worker_crash,
    worker_restart,
    worker_shutdown,
    workers_list,
)

WORKER_ACTIONS = {"shutdown": worker_shutdown, "crash": worker_crash, "restart": worker_restart}
BUTTONS = [
    ("shutdown", "Warm shutdown", "secondary"),
    ("crash", "Crash", "danger"),
    ("restart", "Restart", "secondary"),
]


def _owned_run(request: HttpRequest, run_id: str):
    """The learner's own run, or 404: someone else's run looks exactly like a missing one."""
    run = run_for_learner(run_id, learner_for_request(request))
    if run is None:
        raise Http404("No such run.")
    return run


MEMORY_NOTICE_SECONDS = 600  # how long the lab page says a lane's worker was restarted


def _memory_notices(*, within: float) -> list[dict]:
    """Workers restarted for memory lately, worded for the page; none when Redis is away
    (the page says that elsewhere)."""
    try:
        found = memory_restarts(within=within)
    except redis.RedisError:
        return []
    return [{**n, "text": memory_restart_text(n)} for n in found]


def _lane_cards() -> list[dict]:
    cards = []
    notices = _memory_notices(within=MEMORY_NOTICE_SECONDS)
    for lane in lanes(listed_only=True):
        status = lane_status(lane)
        mine = [n for n in notices if n.get("lane") == lane.name]
        cards.append({"lane": lane, "status": status, "memory_notice": mine[0] if mine else None})
    return cards


def _workers_context(request: HttpRequest) -> dict:
    allowed = controls_allowed(request.user)
    context = {
        "controls": allowed,
        "workers": [],
        "actions": BUTTONS,
        # lanes the guided experiments use, absent from the lane picker: labelled as such
        "experiment_lanes": {lane.name for lane in lanes() if not lane.listed},
    }
    if allowed:
        try:
            context["workers"] = workers_list()
        except redis.RedisError as exc:  # the registry is in Redis; the page must still open
            context["worker_message"] = app_redis_down(exc)
        context["memory_restarts"] = _memory_notices(within=MEMORY_NOTICE_SECONDS)
    return context


@require_http_methods(["GET", "POST"])
def home(request: HttpRequest) -> HttpResponse:
    """Lanes, the run form and (locally or for staff) the workers panel. POST fires a run."""
    status = 200
    if request.method == "POST":
        form = RunForm(request.POST)
        if form.is_valid():
            try:
                run = run_fire(
                    learner=learner_for_request(request),
                    lane=form.cleaned_data["lane"],
                    params=form.params(),
                    prediction=form.cleaned_data.get("prediction"),
                    network=request_network(request),
                )
            except LaneUnavailable as exc:
                # The broker's address and OS error are for staff and local runs (issue 26).
                form.add_error(
                    None, str(exc) if controls_allowed(request.user) else BROKER_NOT_ANSWERING
                )
            except LabError as exc:
                form.add_error(None, str(exc))
            else:
                return redirect("lab:run", run_id=run.id)
        status = 400
        estimate = _estimate_context(form)
    else:
        form = RunForm(initial={"lane": "redis-short"})
        estimate = _estimate_context(RunForm({"lane": "redis-short", **INITIAL}))
    context = {
        "form": form,
        "lane_cards": _lane_cards(),
        "broker_not_answering": BROKER_NOT_ANSWERING,
        **estimate,
        **_workers_context(request),
    }
    return render(request, "lab/home.html", context, status=status)


def _estimate_context(form: RunForm) -> dict:
    """What the form's run would cost, and what would refuse it, without firing it."""
    if not form.is_valid():
        return {"estimate": None, "estimate_error": " ".join(_form_problems(form))}
    lane = lane_get(form.cleaned_data["lane"])
    cost = run_cost(form.params(), lane)
    refusals = []
    for check in (lambda: run_cost_check(cost), lambda: lane_load_check(cost, lane)):
        try:
            check()
        except LabLimitError as exc:
            refusals.append(str(exc))
    return {"estimate": cost, "estimate_refusal": " ".join(refusals)}


def _form_problems(form: RunForm) -> list[str]:
    """Each form error once, with the field's label where Django's own words lack a name."""
    problems = []
    for name, errors in form.errors.items():
        field = form.fields.get(name)
        for message in errors:
            named = field is None or name in message or str(field.label) in message
            problems.append(message if named else f"{field.label}: {message}")
    return problems


@require_GET
def estimate(request: HttpRequest) -> HttpResponse:
    """The run form's cost as the learner types (htmx swaps it in beside the Fire button);
    JSON (deliveries, memory_bytes, seconds) for a client that asks for it."""
    context = _estimate_context(RunForm(request.GET))
    cost = context["estimate"]
    if "application/json" in request.headers.get("Accept", ""):
        if cost is None:
            return JsonResponse({"error": context["estimate_error"]}, status=400)
        return JsonResponse({**cost.as_dict(), "text": cost.text, **_refusal(context)})
    # htmx swaps only 2xx answers; the message is in the partial either way
    status = 200 if cost is not None or request.htmx else 400
    return render(request, "lab/home.html#estimate", context, status=status)


def _refusal(context: dict) -> dict:
    return {"refused": context["estimate_refusal"]} if context.get("estimate_refusal") else {}


@require_GET
def workers_panel(request: HttpRequest) -> HttpResponse:
    """The workers table alone, polled by the home page while it is open."""
    if not controls_allowed(request.user):
        return HttpResponse("Worker controls are for staff or a local run.", status=403)
    return render(request, "lab/home.html#workers", _workers_context(request))


@require_POST
def worker_action(request: HttpRequest, name: str, action: str) -> HttpResponse:
    """Warm shutdown, crash or restart one worker: local runs and staff only."""
    if not controls_allowed(request.user):
        return HttpResponse(
            "Worker controls are only open on a local run (scripts/run) or to staff.", status=403
        )
    act = WORKER_ACTIONS.get(action)
    if act is None:
        raise Http404("No such worker action.")
    learner = learner_for_request(request)
    try:
        ratelimits.spend_or_raise(
            ratelimits.Budget("worker-controls", settings.LAB_RUNS_PER_MINUTE * 3, 60),
            payer_of(learner),
            message="That is more than {amount} of these in a minute; try again in {wait} s.",
        )
        act(name=name)
    except ratelimits.RateLimited as exc:
        return _worker_message(request, str(exc), status=429)
    except LabError as exc:
        return _worker_message(request, str(exc), status=400)
    except redis.RedisError as exc:
        return _worker_message(request, app_redis_down(exc), status=503)
    return _worker_message(request, f"{action.capitalize()} sent to {name}.", status=200)


def _worker_message(request: HttpRequest, text: str, *, status: int) -> HttpResponse:
    context = {**_workers_context(request)}
    context.setdefault("worker_message", text)
    context["worker_ok"] = status == 200
    if request.htmx:
        # htmx only swaps 2xx answers by default; the message is in the panel either way.
        return render(request, "lab/home.html#workers", context, status=200)
    level = messages.SUCCESS if status == 200 else messages.ERROR
    messages.add_message(request, level, text)
    return redirect("lab:home")


@require_GET
def run_page(request: HttpRequest, run_id: str) -> HttpResponse:
    run = _owned_run(request, run_id)
    live = run.status == "running"
    lane = _lane_or_none(run.lane)
    # A running run gets its events over the socket on connect (backlog, then live);
    # a finished one is drawn here from what was stored.
    events = [] if live else run_events(run)
    picture = picture_from(events)
    summary = run_summary(run)
    context = {
        "run": run,
        # what the cost model said when it was fired (the same figures the form showed)
        "estimate": run_estimate(run, lane) if lane and run.fired_at else None,
        "live": live,
        "replay": not live,
        "picture": picture,
        "counts": summary,
        "prediction": run.prediction,
        "final": not live,
        "celery_code": celery_code(params=run.params or {}, lane=lane) if lane else "",
        "counter_defs": COUNTERS,
        # after the run: what happened and why, and (for a batch) copies per task
        **({} if live else after_run_context(summary=summary, events=events)),
        "params_text": history.params_text(run.params),
        "versions_text": versions_text(run.versions),
        "t0": f"{run.fired_at:.3f}",
        "finished_at": f"{run.settled_at:.3f}" if run.settled_at else "",
        "vt": run.visibility_timeout,
        "span": history.run_span(run),
        "ws_url": f"/ws/lab/runs/{run.id}/",
        "broker_panel": live and lane is not None and lane.kind == "redis",
    }
    return render(request, "lab/run.html", context)


def _lane_or_none(name: str):
    try:
        return lane_get(name)
    except LabError:
        return None


@require_GET
def history_page(request: HttpRequest) -> HttpResponse:
    rows = history.history_rows(learner=learner_for_request(request))
    return render(request, "lab/history.html", {"rows": rows})


@require_GET
def export_csv(request: HttpRequest, run_id: str) -> HttpResponse:
    run = _owned_run(request, run_id)
    response = HttpResponse(export.events_csv(run), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="lab-run-{run.id}.csv"'
    return response


@require_GET
def export_json(request: HttpRequest, run_id: str) -> JsonResponse:
    run = _owned_run(request, run_id)
    response = JsonResponse(export.run_document(run), json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="lab-run-{run.id}.json"'
    return response


def run_url(run_id: str) -> str:
    return reverse("lab:run", kwargs={"run_id": run_id})

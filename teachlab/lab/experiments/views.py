"""Experiment pages: the list, one experiment (question and prediction), one attempt (live run,
then prediction against observation, the checks and the explanation)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRefresh

from lessons.learners import learner_for_request
from teachlab.core.identity import POOLED_MESSAGE, is_pooled
from teachlab.lab.experiments.attempts import (
    AttemptRefused,
    attempt_for_learner,
    attempt_queue_failed,
    attempt_start,
    attempts_latest,
    wait_for_first_run,
)
from teachlab.lab.experiments.catalog import Experiment, experiment_get, experiments_load
from teachlab.lab.experiments.charts import charts_for_run
from teachlab.lab.experiments.models import Attempt
from teachlab.lab.matrix.records import verified_rows
from teachlab.lab.models import Run
from teachlab.lab.runs.explain import COUNTERS
from teachlab.lab.worker.workers import controls_allowed

TEMPLATE = "lab/experiment.html"
BLOCKED = (
    "This experiment crashes or stops a lab worker, so it runs only on a local lab "
    "(scripts/run) or for staff."
)


def _experiment(slug: str) -> Experiment:
    experiment = experiment_get(slug=slug)
    if experiment is None:
        raise Http404("No such experiment.")
    return experiment


def _lesson_url(lesson: str, tier: str | None = None) -> str:
    try:
        if tier:
            return reverse("lessons:tier", kwargs={"slug": lesson, "tier": tier})
        return reverse("lessons:question", kwargs={"slug": lesson})
    except NoReverseMatch:
        return ""


def _lesson_titles() -> dict[str, str]:
    try:
        from lessons.catalog import all_questions

        return {q.slug: q.title for q in all_questions()}
    except Exception:  # noqa: BLE001 - titles are a nicety; slugs do when the catalog is away
        return {}


def _context(experiment: Experiment) -> dict:
    titles = _lesson_titles()
    backs = [
        {
            "lesson": b["lesson"],
            "title": titles.get(b["lesson"], b["lesson"]),
            "url": _lesson_url(b["lesson"]),
            "claims": b["claims"],
        }
        for b in experiment.backs
    ]
    links = [
        {
            "text": link.get("text")
            or f"{titles.get(link['lesson'], link['lesson'])}, {link['tier']}",
            "url": _lesson_url(link["lesson"], link["tier"]),
            "tier": link["tier"],
        }
        for link in experiment.links
    ]
    stops_workers = any(
        isinstance(step, dict) and ({"crash", "shutdown", "disconnect"} & set(step))
        for run in experiment.runs
        for step in run["steps"]
    )
    return {
        "experiment": experiment,
        "backs": backs,
        "links": links,
        "stops_workers": stops_workers,
        "verified": verified_rows(experiment.slug),
    }


@require_GET
def experiment_list(request: HttpRequest) -> HttpResponse:
    latest = attempts_latest(learner=learner_for_request(request))
    rows = [{"experiment": e, "attempt": latest.get(e.slug)} for e in experiments_load()]
    return render(request, "lab/experiment_list.html", {"rows": rows})


@require_http_methods(["GET", "POST"])
def experiment_page(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the question and the prediction form. POST: store the prediction and start."""
    experiment = _experiment(slug)
    learner = learner_for_request(request)
    error = ""
    status = 200
    context = _context(experiment)
    # Stopping workers is a lab control (issue 4): local runs and staff only, here too.
    blocked = context["stops_workers"] and not controls_allowed(request.user)
    if request.method == "POST" and blocked:
        error, status = BLOCKED, 403
    elif request.method == "POST" and is_pooled(learner):
        # Four cookie-less requests took all four experiment slots on 5def06e (issue 26).
        error, status = POOLED_MESSAGE, 400
    elif request.method == "POST":
        try:
            attempt = attempt_start(
                learner=learner,
                experiment=experiment,
                raw_prediction=request.POST.get("prediction"),
                raw_timing=request.POST.get("timing"),
            )
        except AttemptRefused as exc:
            error, status = str(exc), 400
        else:
            if attempt_queue_failed(attempt):  # the jobs broker did not answer
                error, status = attempt.error, 503
            else:
                wait_for_first_run(attempt=attempt)
                return redirect("lab:experiments:attempt", slug=slug, attempt_id=attempt.id)
    past = list(Attempt.objects.owned_by(learner).filter(slug=slug)[:5])
    context = {
        **context,
        "blocked": blocked,
        "error": error,
        "posted": request.POST.get("prediction", "") if request.method == "POST" else "",
        "posted_timing": request.POST.get("timing", "") if request.method == "POST" else "",
        "past": past,
    }
    return render(request, TEMPLATE, context, status=status)


def _attempt_context(request: HttpRequest, experiment: Experiment, attempt: Attempt) -> dict:
    runs = {r.id: r for r in Run.objects.filter(id__in=list(attempt.runs.values()))}
    order = [spec["name"] for spec in experiment.runs]  # the file's order, not firing order
    fired = [
        (name, runs[attempt.runs[name]])
        for name in order
        if name in attempt.runs and attempt.runs[name] in runs
    ]
    watch_name = request.GET.get("watch") or (fired[0][0] if fired else "")
    watched = next((run for name, run in fired if name == watch_name), None)
    result = attempt.result or {}
    charts = []
    if attempt.status == Attempt.Status.DONE:
        for name, run in fired:
            chart = charts_for_run(run=run)
            if chart:
                charts.append({"name": name, "run": run, "charts": chart})
    return {
        **_context(experiment),
        "attempt": attempt,
        "fired": fired,
        "watch_name": watch_name,
        "watched": watched,
        "live": _live_context(watched) if watched is not None else None,
        "result": result,
        "charts": charts,
        "prediction_label": _prediction_label(experiment, attempt.prediction.get("value")),
        "timing_label": _timing_label(experiment, attempt.prediction.get("timing")),
        "known_runs": len(fired),
        "counter_defs": COUNTERS,
    }


def _prediction_label(experiment: Experiment, value) -> str:
    for choice in experiment.prediction.get("choices", []):
        if choice["id"] == value:
            return choice["label"]
    unit = experiment.prediction.get("unit", "")
    return f"{value} {unit}".strip()


def _timing_label(experiment: Experiment, value) -> str:
    for choice in (experiment.prediction.get("timing") or {}).get("choices", []):
        if choice["id"] == value:
            return choice["label"]
    return ""


def _live_context(run: Run) -> dict:
    """What the lab's live partials (templates/lab/run.html) need to draw and follow a run."""
    from teachlab.lab.live.fragments import picture_from
    from teachlab.lab.runs.reading import run_events, run_summary
    from teachlab.lab.web import history

    live = run.status == "running"
    return {
        "run": run,
        "is_live": live,
        "final": not live,  # a run that is over shows its amplification, as the run page does
        "picture": picture_from([] if live else run_events(run)),
        "counts": run_summary(run),
        "t0": f"{run.fired_at:.3f}",
        "vt": run.visibility_timeout,
        "span": history.run_span(run),
        "finished_at": f"{run.settled_at:.3f}" if run.settled_at else "",
        "ws_url": f"/ws/lab/runs/{run.id}/",
        "params_text": history.params_text(run.params),
        "broker_panel": _lane_kind(run.lane) == "redis",
    }


def _lane_kind(name: str) -> str:
    from teachlab.lab.runs.errors import LabError
    from teachlab.lab.runs.lanes import lane_get

    try:
        return lane_get(name).kind
    except LabError:
        return ""


@require_GET
def attempt_page(request: HttpRequest, slug: str, attempt_id: str) -> HttpResponse:
    experiment = _experiment(slug)
    attempt = attempt_for_learner(attempt_id=attempt_id, learner=learner_for_request(request))
    if attempt is None or attempt.slug != slug:
        raise Http404("No such attempt.")
    return render(request, TEMPLATE, _attempt_context(request, experiment, attempt))


@require_GET
def attempt_status(request: HttpRequest, slug: str, attempt_id: str) -> HttpResponse:
    """Polled while the attempt runs: the current step; a page refresh when a new run was
    fired (so its live view appears) or when the verdict is in."""
    experiment = _experiment(slug)
    attempt = attempt_for_learner(attempt_id=attempt_id, learner=learner_for_request(request))
    if attempt is None or attempt.slug != slug:
        raise Http404("No such attempt.")
    try:
        known = int(request.GET.get("known", "0"))
    except ValueError:
        known = 0
    if not attempt.is_active or len(attempt.runs) != known:
        return HttpResponseClientRefresh()
    context = {
        "experiment": experiment,
        "attempt": attempt,
        "known_runs": known,
        "watch_name": request.GET.get("watch", "")[:40],
    }
    return render(request, f"{TEMPLATE}#status", context)


@require_GET
def run_charts(request: HttpRequest, run_id: str) -> HttpResponse:
    from teachlab.lab.runs.reading import run_for_learner

    run = run_for_learner(run_id, learner_for_request(request))
    if run is None:
        raise Http404("No such run.")
    context = {"run": run, "charts": charts_for_run(run=run, force=True)}
    if request.htmx:
        return render(request, "lab/experiment_charts.html#charts", context)
    return render(request, "lab/experiment_run_charts.html", context)

"""Lesson pages: the index and the question walk. Views read the request, call a function,
render; htmx requests get the named partial of the same template."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from lessons import review
from lessons.catalog import catalog_problems, get_question
from lessons.course import course_order, course_resume, course_steps
from lessons.learners import learner_for_request
from lessons.pages import TIER_LABELS, lab_experiment_titles, question_context
from lessons.progress import reveal_record, revealed_tiers, review_rows
from lessons.schema import TIERS
from lessons.themes import THEMES, theme_save


def _not_found(request: HttpRequest, what: str) -> HttpResponse:
    """A 404 that names any lesson file the app refused: the question may be in it."""
    return render(
        request,
        "lessons/not_found.html",
        {"what": what, "problems": catalog_problems()},
        status=404,
    )


HOME_DUE_SHOWN = 5  # the home page lists the first few; /review/ has them all


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    """The home page: what the app is, the course path, what is due, the ways to practise,
    and every question."""
    learner = learner_for_request(request)
    steps = course_steps(learner=learner)
    due = review.review_due(learner=learner, today=timezone.localdate())
    revealed = revealed_tiers(learner=learner)
    rows = [
        {
            "question": q,
            "tiers": [
                {"name": t, "label": TIER_LABELS[t], "revealed": t in revealed.get(q.slug, ())}
                for t in TIERS
            ],
            "revealed_count": len(revealed.get(q.slug, ())),
        }
        for q in course_order()
    ]
    return render(
        request,
        "lessons/index.html",
        {
            "rows": rows,
            "problems": catalog_problems(),
            "steps": steps,
            "resume": course_resume(steps),
            "due": review_rows(due[:HOME_DUE_SHOWN]),
            "due_count": due.count(),
            "experiment_count": len(lab_experiment_titles() or {}),
        },
    )


@require_GET
def question(request: HttpRequest, slug: str) -> HttpResponse:
    """The prompt first; every answer tier stays hidden until the learner asks for it."""
    q = get_question(slug)
    if q is None:
        return _not_found(request, f"There is no question “{slug}”.")
    learner_for_request(request)
    return render(request, "lessons/question.html", question_context(q, revealed_upto=None))


@require_GET
def tier(request: HttpRequest, slug: str, tier: str) -> HttpResponse:
    """Reveal `tier` (and the ones before it) and record it: htmx swaps in just that tier,
    a plain visit (the permalink) gets the whole page with those tiers open."""
    q = get_question(slug)
    if q is None:
        return _not_found(request, f"There is no question “{slug}”.")
    if tier not in TIERS:
        return _not_found(
            request, f"There is no answer tier “{tier}”: try basics, solid or senior."
        )
    reveal_record(learner=learner_for_request(request, create=True), slug=q.slug, tier=tier)
    context = question_context(q, revealed_upto=tier)
    # htmx restoring history it has no snapshot for asks for the whole page, not a partial.
    if request.htmx and not request.htmx.history_restore_request:
        context["tier"] = context["revealed"][-1]
        response = render(request, "lessons/question.html#tier", context)
    else:
        response = render(request, "lessons/question.html", context)
    # One URL, two bodies: caches (and the back button) must keep them apart.
    patch_vary_headers(response, ("HX-Request",))
    return response


@require_GET
def glossary(request: HttpRequest) -> HttpResponse:
    """Every term with its definitions and where the lab shows it; a term's anchor is its slug."""
    from lessons.glossary import load_glossary

    loaded = load_glossary()
    return render(
        request, "lessons/glossary.html", {"terms": loaded.terms, "problems": loaded.problems}
    )


@require_GET
def search(request: HttpRequest) -> HttpResponse:
    """/search/?q=…: questions, tiers, claims, experiments and glossary terms matching every
    word, best first, each linking to where it is shown."""
    from lessons.search import search as search_content

    outcome = search_content(request.GET.get("q", ""))
    return render(request, "lessons/search.html", {"outcome": outcome})


@require_POST
def theme_set(request: HttpRequest) -> HttpResponse:
    """The theme switch: static/js/theme.js repaints at once and posts in the background
    (answered 204); without script the form posts and comes back to the page."""
    theme = request.POST.get("theme", "")
    if theme not in THEMES:
        return HttpResponse("Choose system, light or dark.", status=400, content_type="text/plain")
    if request.headers.get("X-Theme-Switch"):
        response = HttpResponse(status=204)
    else:
        back = request.POST.get("next", "")
        safe = url_has_allowed_host_and_scheme(
            back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
        response = redirect(back if safe and back.startswith("/") else "/")
    theme_save(request=request, response=response, theme=theme)
    return response

"""Pages of the quiz, the review queue, the progress page and sign-up: thin views over
lessons/quiz.py, lessons/review.py and lessons/progress.py."""

from __future__ import annotations

import json
import logging

from django.conf import settings
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import reswap, retarget

from lessons import progress, quiz, review
from lessons.catalog import all_questions, get_question
from lessons.learners import learner_for_request, payer_for_request
from lessons.models import SelfRating
from lessons.progress_export import progress_export
from lessons.progress_file import ProgressFileError, progress_file_parse
from lessons.progress_import import progress_import
from teachlab.core import ratelimits
from teachlab.core.identity import request_network
from teachlab.core.signin import SignupForm


def _today():
    return timezone.localdate()


def _problem(request: HttpRequest, error: quiz.QuizError) -> HttpResponse:
    """A refused request as a clear 4xx: an alert fragment for htmx, a page otherwise."""
    if request.htmx:
        response = render(
            request,
            "lessons/quiz_attempt.html#problem",
            {"message": error.message},
            status=error.status,
        )
        # htmx leaves 4xx bodies unswapped unless the page allows it (see quiz_attempt.html).
        response["X-Quiz-Problem"] = "1"
        return reswap(retarget(response, "#quiz-problem"), "innerHTML")
    return render(
        request, "lessons/quiz_error.html", {"message": error.message}, status=error.status
    )


def _not_yours(request: HttpRequest) -> HttpResponse:
    # Someone else's attempt answers exactly like a missing one: ids reveal nothing.
    return _problem(
        request, quiz.UnknownAttempt("There is no quiz attempt of yours with that number.")
    )


# --- quiz ----------------------------------------------------------------------------------


@require_GET
def quiz_index(request: HttpRequest) -> HttpResponse:
    learner = learner_for_request(request)
    attempts = [
        (attempt, quiz.attempt_score(attempt=attempt))
        for attempt in learner.quiz_attempts.all()[:10]
    ]
    return render(
        request,
        "lessons/quiz_index.html",
        {"questions": all_questions(), "attempts": attempts},
    )


@require_POST
def quiz_start(request: HttpRequest) -> HttpResponse:
    learner = learner_for_request(request)
    try:
        attempt = quiz.attempt_start(
            learner=learner, question_slug=request.POST.get("question") or None
        )
    except quiz.QuizError as error:
        return _problem(request, error)
    return redirect("lessons:quiz_attempt", attempt_id=attempt.pk)


@require_GET
def quiz_attempt(request: HttpRequest, attempt_id: int) -> HttpResponse:
    attempt = quiz.attempt_for(learner=learner_for_request(request), attempt_id=attempt_id)
    if attempt is None:
        return _not_yours(request)
    items = quiz.attempt_items(attempt=attempt)
    return render(
        request,
        "lessons/quiz_attempt.html",
        {
            "attempt": attempt,
            "items": items,
            "score": quiz.score_items(items),
            "question": get_question(attempt.question_slug),
        },
    )


@require_POST
def quiz_answer(request: HttpRequest, attempt_id: int) -> HttpResponse:
    attempt = quiz.attempt_for(learner=learner_for_request(request), attempt_id=attempt_id)
    if attempt is None:
        return _not_yours(request)
    claim_key = request.POST.get("claim", "")
    try:
        said_holds = quiz.parse_answer(request.POST.get("answer"))
        _, created = quiz.answer_record(
            attempt=attempt, claim_key=claim_key, said_holds=said_holds, today=_today()
        )
    except quiz.QuizError as error:
        return _problem(request, error)
    item = quiz.attempt_item(attempt=attempt, claim_key=claim_key)
    if not request.htmx:
        return redirect(reverse("lessons:quiz_attempt", args=[attempt.pk]) + f"#item-{item.number}")
    return render(
        request,
        "lessons/quiz_attempt.html#answered",
        {
            "attempt": attempt,
            "item": item,
            "repeat": not created,
            "score": quiz.attempt_score(attempt=attempt),
        },
    )


@require_GET
def quiz_result(request: HttpRequest, attempt_id: int) -> HttpResponse:
    attempt = quiz.attempt_for(learner=learner_for_request(request), attempt_id=attempt_id)
    if attempt is None:
        return _not_yours(request)
    return render(
        request,
        "lessons/quiz_result.html",
        {
            "attempt": attempt,
            "score": quiz.attempt_score(attempt=attempt),
            "question": get_question(attempt.question_slug),
        },
    )


@require_POST
def quiz_retry(request: HttpRequest, attempt_id: int) -> HttpResponse:
    attempt = quiz.attempt_for(learner=learner_for_request(request), attempt_id=attempt_id)
    if attempt is None:
        return _not_yours(request)
    try:
        retry = quiz.attempt_retry(attempt=attempt)
    except quiz.QuizError as error:
        return _problem(request, error)
    return redirect("lessons:quiz_attempt", attempt_id=retry.pk)


# --- review --------------------------------------------------------------------------------


@require_GET
def review_page(request: HttpRequest) -> HttpResponse:
    learner = learner_for_request(request)
    today = _today()
    return render(
        request,
        "lessons/review.html",
        {
            "today": today,
            "due": progress.review_rows(review.review_due(learner=learner, today=today)),
            "upcoming": progress.review_rows(review.review_upcoming(learner=learner, today=today)),
        },
    )


@require_POST
def review_quiz_start(request: HttpRequest) -> HttpResponse:
    try:
        attempt = quiz.attempt_review(learner=learner_for_request(request), today=_today())
    except quiz.QuizError as error:
        return _problem(request, error)
    return redirect("lessons:quiz_attempt", attempt_id=attempt.pk)


# --- self-rating after a tier reveal -------------------------------------------------------


@require_POST
def rate(request: HttpRequest, slug: str, tier: str) -> HttpResponse:
    question = get_question(slug)
    if question is None or tier not in question.tiers:
        return _problem(request, quiz.UnknownQuestion("There is no such question or tier."))
    rating = request.POST.get("rating", "")
    if rating not in SelfRating.Rating.values:
        return _problem(request, quiz.QuizError("Choose “missed it”, “partly” or “nailed it”."))
    learner = learner_for_request(request)
    progress.rating_record(
        learner=learner, question_slug=slug, tier=tier, rating=rating, today=_today()
    )
    if not request.htmx:
        return redirect(reverse("lessons:tier", args=[slug, tier]) + f"#self-rating-{tier}")
    return render(
        request,
        "lessons/_self_rating.html",
        progress.rating_context(learner=learner, slug=slug, tier=tier, saved=True),
    )


# --- progress ------------------------------------------------------------------------------


log = logging.getLogger(__name__)
IMPORTS_PER_MINUTE = 10
IMPORT_REPORT_KEY = "progress_import_report"


def _progress_page(request: HttpRequest, *, problems=(), status: int = 200) -> HttpResponse:
    learner = learner_for_request(request, create=False)  # a refusal makes no learner
    today = _today()
    return render(
        request,
        "lessons/progress.html",
        {
            "rows": progress.progress_summary(learner=learner, today=today),
            "overview": progress.progress_overview(learner=learner, today=today),
            "learner": learner,
            "import_problems": list(problems),
            "import_limit_kb": settings.PROGRESS_IMPORT_MAX_BYTES // 1024,
            # The import's report, carried over its redirect once.
            "import_report": request.session.pop(IMPORT_REPORT_KEY, None) if not problems else None,
        },
        status=status,
    )


@require_GET
def progress_page(request: HttpRequest) -> HttpResponse:
    return _progress_page(request)


def _import_throttled(payer: str) -> str | None:
    """A message when this learner has imported too often this minute. Redis away: no limit
    (the upload is size-limited anyway), rather than refusing a learner's own file."""
    try:
        ratelimits.spend_or_raise(
            ratelimits.Budget("progress-import", IMPORTS_PER_MINUTE, 60),
            payer,
            message="That is more than {amount} imports in a minute; try again in {wait} s.",
        )
    except ratelimits.RateLimited as exc:
        return str(exc)
    except Exception:  # redis.ConnectionError and kin
        log.warning("progress import throttle unavailable", exc_info=True)
    return None


# Room for the multipart envelope around the file (boundaries, headers, the CSRF field).
ENVELOPE_BYTES = 16 * 1024


def _too_big(size: int, limit: int) -> str:
    return (
        f"The file is {size // 1024} KB; a progress file can be at most {limit // 1024} KB. "
        "Is it the file “Download my progress” saved?"
    )


@csrf_exempt  # checked by _progress_import below, once the size is known to be sane
@require_POST
def progress_import_view(request: HttpRequest) -> HttpResponse:
    """Upload a file from "Download my progress": checked whole before anything is merged;
    every refusal is a 400 on the progress page saying what is wrong. A body over the limit
    is refused from its Content-Length, before Django parses it (the CSRF check would)."""
    limit = settings.PROGRESS_IMPORT_MAX_BYTES
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit + ENVELOPE_BYTES:
        return _progress_page(request, problems=[_too_big(declared, limit)], status=400)
    return _progress_import(request)


@csrf_protect
def _progress_import(request: HttpRequest) -> HttpResponse:
    upload = request.FILES.get("file")
    limit = settings.PROGRESS_IMPORT_MAX_BYTES
    if upload is None:
        problems = ["Choose the progress file (.json) that “Download my progress” saved."]
    elif upload.size > limit:
        problems = [_too_big(upload.size, limit)]
    elif (throttled := _import_throttled(payer_for_request(request))) is not None:
        return _progress_page(request, problems=[throttled], status=429)
    else:
        try:
            parsed = progress_file_parse(upload.read(limit + 1))
            report = progress_import(learner=learner_for_request(request), upload=parsed)
        except ProgressFileError as error:  # a bad file, or an import out of time (undone)
            problems = error.problems
        else:
            request.session[IMPORT_REPORT_KEY] = report.lines()
            return redirect(reverse("lessons:progress") + "?imported=1#import")
    return _progress_page(request, problems=problems, status=400)


@require_http_methods(["GET", "POST"])
def progress_reset(request: HttpRequest) -> HttpResponse:
    """GET asks for confirmation; only the POST from that page deletes anything."""
    learner = learner_for_request(request)
    if request.method == "POST":
        if request.POST.get("confirm") != "yes":
            return render(
                request,
                "lessons/progress_reset.html",
                {"counts": progress.progress_counts(learner=learner), "unconfirmed": True},
                status=400,
            )
        progress.progress_reset(learner=learner)
        return redirect(reverse("lessons:progress") + "?reset=1")
    return render(
        request,
        "lessons/progress_reset.html",
        {"counts": progress.progress_counts(learner=learner)},
    )


@require_GET
def progress_download(request: HttpRequest) -> HttpResponse:
    data = progress_export(learner=learner_for_request(request), now=timezone.now())
    response = HttpResponse(
        json.dumps(data, indent=2, sort_keys=True), content_type="application/json"
    )
    response["Content-Disposition"] = 'attachment; filename="teachlab-progress.json"'
    return response


# --- sign-up -------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Create an account and sign in; the sign-in merges this browser's progress into it.
    Accounts made per client network are limited (settings.SIGNUPS_PER_NETWORK_PER_HOUR)."""
    form = SignupForm(request.POST if request.method == "POST" else None)
    if request.method == "POST":
        budget = ratelimits.Budget("signup", settings.SIGNUPS_PER_NETWORK_PER_HOUR, 3600)
        try:
            ratelimits.spend_or_raise(
                budget,
                request_network(request),
                message="Too many accounts were made from your network this hour; try again "
                "in about {wait} s.",
            )
        except ratelimits.RateLimited as exc:
            form.is_valid()
            form.add_error(None, str(exc))
            response = render(request, "registration/signup.html", {"form": form}, status=429)
            response["Retry-After"] = str(exc.wait)
            return response
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("lessons:progress")
    return render(
        request, "registration/signup.html", {"form": form}, status=400 if form.errors else 200
    )

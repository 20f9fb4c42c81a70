"""Pages of the quiz, the review queue, the progress page and sign-up: thin views over
lessons/quiz.py, lessons/review.py and lessons/progress.py."""

from __future__ import annotations

import json

from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import reswap, retarget

from lessons import progress, quiz, review
from lessons.catalog import all_questions, get_question
from lessons.learners import learner_for_request
from lessons.models import SelfRating


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


@require_GET
def progress_page(request: HttpRequest) -> HttpResponse:
    learner = learner_for_request(request)
    return render(
        request,
        "lessons/progress.html",
        {"rows": progress.progress_summary(learner=learner, today=_today()), "learner": learner},
    )


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
    data = progress.progress_export(learner=learner_for_request(request), now=timezone.now())
    response = HttpResponse(
        json.dumps(data, indent=2, sort_keys=True), content_type="application/json"
    )
    response["Content-Disposition"] = 'attachment; filename="teachlab-progress.json"'
    return response


# --- sign-up -------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Create an account and sign in; the sign-in merges this browser's progress into it."""
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("lessons:progress")
    return render(
        request, "registration/signup.html", {"form": form}, status=400 if form.errors else 200
    )

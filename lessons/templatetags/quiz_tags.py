"""Template helpers of the quiz and self-rating: lesson Markdown, and the rating widget that
the lesson pages drop under each revealed tier."""

from django import template
from django.utils import timezone
from django.utils.safestring import SafeString

from lessons.catalog import get_question
from lessons.learners import SESSION_KEY
from lessons.models import Learner
from lessons.progress import rating_context
from lessons.rendering import render_inline_markdown, render_markdown

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    """Lesson Markdown as sanitised HTML (lessons/rendering.py)."""
    return render_markdown(text or "")


@register.inclusion_tag("lessons/_self_rating.html", takes_context=True)
def self_rating(context, slug: str, tier: str) -> dict:
    """`{% self_rating question.slug tier.name %}`: the "missed it / partly / nailed it" form,
    showing the learner's current rating. Never creates a learner: reading a page is enough."""
    request = context.get("request")
    learner = None
    if request is not None:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            learner = Learner.objects.filter(user=user).first()
        elif request.session.get(SESSION_KEY):
            learner = Learner.objects.filter(
                key=request.session[SESSION_KEY], user__isnull=True
            ).first()
    return {
        **rating_context(learner=learner, slug=slug, tier=tier),
        "csrf_token": context.get("csrf_token"),
    }


@register.filter
def question_title(slug: str) -> str:
    """A question's title by slug; the slug itself if the lesson is gone."""
    question = get_question(slug)
    return question.title if question else slug


@register.filter
def days_from_today(day) -> str:
    """Words for a review date as a learner thinks of it: "tomorrow", "in 4 days"."""
    days = (day - timezone.localdate()).days
    if days <= 0:
        return "today"
    return "tomorrow" if days == 1 else f"in {days} days"


@register.filter
def inline_markdown(text: str) -> SafeString:
    """A one-line claim (with `code` and *emphasis*) as HTML that fits inside a sentence or a
    <legend>."""
    return render_inline_markdown(text)

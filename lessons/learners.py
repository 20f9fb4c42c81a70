"""Find or create the Learner behind a request (views) or a WebSocket scope (consumers)."""

from django.http import HttpRequest

from lessons.models import Learner

SESSION_KEY = "learner_key"


def learner_for_request(request: HttpRequest) -> Learner:
    """The signed-in user's learner, else the one in the session, created on first use."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        learner, _ = Learner.objects.get_or_create(user=user)
        request.session[SESSION_KEY] = learner.key
        return learner
    key = request.session.get(SESSION_KEY)
    if key:
        learner = Learner.objects.filter(key=key, user__isnull=True).first()
        if learner is not None:
            return learner
    learner = Learner.objects.create()
    request.session[SESSION_KEY] = learner.key
    return learner


def learner_for_scope(scope: dict) -> Learner | None:
    """The learner of a WebSocket connection, or None; never creates one (call via
    database_sync_to_async)."""
    user = scope.get("user")
    if user is not None and user.is_authenticated:
        return Learner.objects.filter(user=user).first()
    session = scope.get("session")
    key = session.get(SESSION_KEY) if session is not None else None
    if not key:
        return None
    return Learner.objects.filter(key=key).first()

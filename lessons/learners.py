"""Find or create the Learner behind a request (views) or a WebSocket scope (consumers), and
who pays for what that learner spends (teachlab/core/identity.py decides the payer).

A learner row is made only when a visitor first does something that needs one (a POST, a
tier revealed); reading a page as a newcomer uses the shared, empty "nobody" learner, so a
crawler or a cookie-less script leaves no rows behind.
"""

from django.http import HttpRequest

from lessons.models import Learner
from teachlab.core import identity

SESSION_KEY = "learner_key"
NOBODY_KEY = "nobody"  # never written to: only read by pages shown to newcomers
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


def nobody() -> Learner:
    """The learner of a newcomer's page view: has no progress, runs or attempts, ever."""
    learner, _ = Learner.objects.get_or_create(key=NOBODY_KEY)
    learner.payer = NOBODY_KEY
    return learner


def learner_for_request(request: HttpRequest, *, create: bool | None = None) -> Learner:
    """The signed-in user's learner, else the one in the session, else (when `create`,
    which defaults to "the request changes something") a new one: keyed on the visitor
    cookie when the request has a valid one, so reloading does not mint another.

    The learner comes back with `.payer`: the key its quotas are charged to (its own, or
    its network's pool of cookie-less requests: identity.payer_for)."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        learner, _ = Learner.objects.get_or_create(user=user)
        request.session[SESSION_KEY] = learner.key
        learner.payer = learner.key
        return learner
    key = request.session.get(SESSION_KEY)
    if key:
        learner = Learner.objects.filter(key=key, user__isnull=True).first()
        if learner is not None:
            learner.payer = learner.key
            return learner
    if create is None:
        create = request.method not in SAFE_METHODS
    visitor = identity.visitor_token(request)
    learner = Learner.objects.filter(key=visitor, user__isnull=True).first() if visitor else None
    if learner is None and not create:
        return nobody()
    # A learner found by its visitor cookie is the one a refused answer (a 5xx, whose session
    # Django does not save) made: reading pages finds it again.
    created = learner is None
    if created:
        taken = visitor and Learner.objects.filter(key=visitor).exists()
        learner = (
            Learner.objects.create(key=visitor)
            if visitor and not taken
            else Learner.objects.create()
        )
    learner.payer = identity.payer_for(request, learner=learner, created=created, visitor=visitor)
    request.session[SESSION_KEY] = learner.key
    return learner


def payer_for_request(request: HttpRequest) -> str:
    """The key this request's quotas are charged to, without making a learner: a request
    that may yet be refused (a bad upload) leaves no row behind. A newcomer pays with its
    visitor cookie (the key its learner will get) or, with none, its network's pool."""
    learner = learner_for_request(request, create=False)
    if learner.key != NOBODY_KEY:
        return identity.payer_of(learner)
    return identity.visitor_token(request) or identity.pool_key(request)


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

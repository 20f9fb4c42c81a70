"""Old anonymous learners go: a visitor's session cookie lasts settings.SESSION_COOKIE_AGE,
after which nobody can reach that learner again, so keeping its rows only costs space."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.sessions.models import Session
from django.utils import timezone

from lessons.learners import NOBODY_KEY, SESSION_KEY
from lessons.models import Learner


def _keys_in_live_sessions() -> set[str]:
    keys = set()
    for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator():
        key = session.get_decoded().get(SESSION_KEY)
        if key:
            keys.add(key)
    return keys


def learners_prune(*, now=None) -> int:
    """Delete anonymous learners made more than settings.ANON_LEARNER_DAYS ago that no live
    session names; returns how many went."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.ANON_LEARNER_DAYS)
    old = Learner.objects.filter(user__isnull=True, created_at__lt=cutoff).exclude(key=NOBODY_KEY)
    old = old.exclude(key__in=_keys_in_live_sessions())
    removed = 0
    for pk in old.values_list("pk", flat=True).iterator():
        Learner.objects.filter(pk=pk).delete()  # one at a time: each cascades to its rows
        removed += 1
    return removed

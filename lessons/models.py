"""Progress lives here: an anonymous learner per session cookie, merged into an account on sign-in."""

import secrets

from django.conf import settings
from django.db import models


def new_learner_key() -> str:
    return secrets.token_urlsafe(18)


class Learner(models.Model):
    """Whoever is studying: anonymous (tied to the session) until they sign in.

    Every piece of progress, every lab run and every workshop seat hangs off a Learner, so
    ownership checks compare learners, never session keys.
    """

    key = models.CharField(max_length=40, unique=True, default=new_learner_key)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"learner {self.pk} ({self.user or 'anonymous'})"

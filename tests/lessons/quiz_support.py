"""Helpers of the quiz, review and progress tests: two small fixture lessons and a learner
whose session a Django test client carries."""

from __future__ import annotations

import re
from pathlib import Path

from django.test import Client

from lessons.learners import SESSION_KEY
from lessons.models import Learner

QUIZ_FIXTURES = Path(__file__).resolve().parent / "quiz_fixtures"
ALPHA = "quiz-alpha"
BETA = "quiz-beta"


def client_learner(client: Client) -> Learner:
    """The learner behind a client's session; made here, as the browser's first action would
    make it, when the client has only read pages so far (reading makes no learner)."""
    session = client.session
    if SESSION_KEY not in session:
        session[SESSION_KEY] = Learner.objects.create().key
        session.save()
    return Learner.objects.get(key=client.session[SESSION_KEY])


def start_quiz(client: Client, question: str = "") -> int:
    """Start a quiz through the page's form; the new attempt's id."""
    response = client.post("/quiz/start/", {"question": question})
    assert response.status_code == 302, response.content
    match = re.search(r"/quiz/a/(\d+)/$", response["Location"])
    assert match, response["Location"]
    return int(match.group(1))


def shown_claims(client: Client, attempt_id: int) -> list[str]:
    """Claim keys in the order the attempt page shows them (unanswered ones)."""
    html = client.get(f"/quiz/a/{attempt_id}/").content.decode()
    return re.findall(r'name="claim" value="([^"]+)"', html)


def answer(client: Client, attempt_id: int, claim_key: str, value: str, htmx: bool = True):
    headers = {"HX-Request": "true"} if htmx else {}
    return client.post(
        f"/quiz/a/{attempt_id}/answer/", {"claim": claim_key, "answer": value}, headers=headers
    )


def right_answer(holds: bool) -> str:
    return "holds" if holds else "costs"


def wrong_answer(holds: bool) -> str:
    return "costs" if holds else "holds"

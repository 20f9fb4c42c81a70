"""Who pays for a request (issue 26, finding 2): a client that drops its cookies cannot mint a
fresh quota per request, while a class behind one address each gets its own; pages read by
newcomers leave no rows behind, and old anonymous learners are pruned."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from lessons.learners import NOBODY_KEY, SESSION_KEY
from lessons.models import Learner
from teachlab.core.identity import client_address, network_of
from teachlab.lab.models import Run

pytestmark = pytest.mark.django_db
FIRE = {"lane": "redis-short", "countdown": "0", "count": "1"}
NAT = "198.51.100.40"


def _fired(response) -> bool:
    return response.status_code == 302 and "/lab/runs/" in response["Location"]


def test_a_client_that_drops_its_cookies_gets_no_more_than_one_learners_quota(settings):
    """On 5def06e every cookie-less POST was a new learner with a new quota: 15 of 15."""
    settings.LAB_RUNS_PER_MINUTE = 4
    settings.LAB_MAX_RUNS_AT_ONCE = 100
    answers = [Client().post("/lab/", FIRE, REMOTE_ADDR=NAT) for _ in range(12)]
    fired = [r for r in answers if _fired(r)]
    assert 1 <= len(fired) <= 4, f"{len(fired)} runs accepted from a cookie-less loop"
    refused = [r for r in answers if not _fired(r)]
    assert refused and all(b"4 runs a minute" in r.content for r in refused)


def test_forty_learners_behind_one_address_each_get_their_own_quota(settings):
    settings.LAB_RUNS_PER_MINUTE = 2
    settings.LAB_MAX_RUNS_AT_ONCE = 100
    fired = 0
    for _ in range(40):
        browser = Client()
        assert browser.get("/lab/", REMOTE_ADDR=NAT).status_code == 200  # the page first
        fired += sum(_fired(browser.post("/lab/", FIRE, REMOTE_ADDR=NAT)) for _ in range(2))
    assert fired == 80
    assert Run.objects.values("learner").distinct().count() == 40


def test_reading_pages_as_a_newcomer_makes_no_learner_and_no_session():
    before = Learner.objects.exclude(key=NOBODY_KEY).count()
    for path in ["/", "/quiz/", "/review/", "/progress/", "/lab/", "/lab/runs/"]:
        response = Client().get(path)
        assert response.status_code == 200, path
    assert Learner.objects.exclude(key=NOBODY_KEY).count() == before
    assert not Session.objects.exists()


def test_the_first_thing_done_makes_the_learner_and_reloads_keep_it():
    browser = Client()
    browser.get("/")
    assert browser.post("/quiz/start/", {}).status_code in (302, 400)
    key = browser.session[SESSION_KEY]
    browser.post("/quiz/start/", {})
    assert browser.session[SESSION_KEY] == key
    assert Learner.objects.filter(key=key).count() == 1


def test_prune_learners_deletes_only_old_anonymous_learners(settings, django_user_model):
    settings.ANON_LEARNER_DAYS = 14
    old = Learner.objects.create()
    recent = Learner.objects.create()
    account = Learner.objects.create(user=django_user_model.objects.create_user("kept"))
    Learner.objects.filter(pk__in=[old.pk, account.pk]).update(
        created_at=timezone.now() - timedelta(days=30)
    )
    call_command("prune_learners")
    assert set(Learner.objects.values_list("pk", flat=True)) >= {recent.pk, account.pk}
    assert not Learner.objects.filter(pk=old.pk).exists()


@pytest.mark.parametrize(
    ("peer", "forwarded", "trusted", "expected"),
    [
        ("203.0.113.5", "1.2.3.4", [], "203.0.113.5"),  # no trusted proxy: header ignored
        ("10.0.0.2", "1.2.3.4", ["10.0.0.0/8"], "1.2.3.4"),
        ("10.0.0.2", "6.6.6.6, 1.2.3.4", ["10.0.0.0/8"], "1.2.3.4"),  # client-prepended
        ("10.0.0.2", "1.2.3.4, 10.0.0.9", ["10.0.0.0/8"], "1.2.3.4"),
        ("10.0.0.2", "junk", ["10.0.0.0/8"], "10.0.0.2"),
    ],
)
def test_the_client_address_comes_from_the_header_only_through_a_trusted_proxy(
    settings, rf, peer, forwarded, trusted, expected
):
    settings.TRUSTED_PROXIES = trusted
    request = rf.get("/", REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == expected


def test_an_ipv6_network_is_its_64():
    assert network_of("2001:db8:1:2:aaaa::1") == network_of("2001:db8:1:2:bbbb::9")
    assert network_of("2001:db8:1:3::1") != network_of("2001:db8:1:2::1")
    assert network_of("203.0.113.5") == "203.0.113.5"


def test_the_jobs_worker_prunes_learners_every_hour():
    from django.conf import settings

    from teachlab.celery import app, jobs_worker_argv

    app.loader.import_default_modules()
    assert "teachlab.learners_prune" in app.tasks
    entry = settings.CELERY_BEAT_SCHEDULE["prune-anonymous-learners"]
    assert entry == {"task": "teachlab.learners_prune", "schedule": 3600.0}
    assert "--beat" in jobs_worker_argv("x")

"""A ceiling on lab load per client network (issue 26, item 2): learners minted behind one
address each have their own budgets, but together they cannot have more runs going, or more
copies held, than one network may; another network is not held back by them."""

from __future__ import annotations

import pytest
from django.test import Client

from teachlab.lab.models import Run

pytestmark = pytest.mark.django_db
NAT = "198.51.100.41"
ELSEWHERE = "203.0.113.9"
ONE = {"lane": "redis-short", "countdown": "0", "count": "1"}
# 20 tasks waiting 25 s on a 10 s timeout: about three copies each (teachlab/lab/runs/costs.py).
HEAVY = {"lane": "redis-short", "countdown": "25", "count": "20"}


def _fire(fields: dict, address: str):
    browser = Client()
    assert browser.get("/lab/", REMOTE_ADDR=address).status_code == 200  # a visitor cookie
    return browser.post("/lab/", fields, REMOTE_ADDR=address)


def _fired(response) -> bool:
    return response.status_code == 302 and "/lab/runs/" in response["Location"]


def test_learners_behind_one_address_share_the_networks_runs_at_once(settings):
    settings.LAB_NETWORK_MAX_RUNS_AT_ONCE = 3
    assert all(_fired(_fire(ONE, NAT)) for _ in range(3))
    refused = _fire(ONE, NAT)
    assert refused.status_code == 400
    assert "Your network" in refused.content.decode() and "3 at once" in refused.content.decode()
    assert Run.objects.filter(network=NAT).count() == 3
    assert _fired(_fire(ONE, ELSEWHERE))  # another network fires as usual


def test_learners_behind_one_address_share_the_networks_held_copies(settings):
    settings.LAB_NETWORK_MAX_HELD = 100
    first = _fire(HEAVY, NAT)
    assert _fired(first), first.content.decode()[-1500:]
    refused = _fire(HEAVY, NAT)  # a second learner, whose own budgets are untouched
    assert refused.status_code == 400
    body = refused.content.decode()
    assert "from your network" in body and "100 at once for one network" in body
    assert _fired(_fire(HEAVY, ELSEWHERE))

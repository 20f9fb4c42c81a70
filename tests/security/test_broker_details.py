"""A broker that does not answer: its address and the OS's error are shown to staff (and on a
local run), everyone else reads that the lab's broker is not answering."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from lessons.models import Learner
from teachlab.lab.models import Run
from teachlab.lab.runs import firing
from teachlab.lab.runs.errors import (
    BROKER_NOT_ANSWERING,
    LabLimitError,
    LaneUnavailable,
    learner_text,
)
from teachlab.lab.runs.lanes import LaneStatus, lane_get
from tests.stack import free_port
from tests.workshop.conftest import make_user

pytestmark = pytest.mark.django_db

PLAIN = "The lab&#x27;s broker is not answering"


@pytest.fixture
def dead_lane(settings):
    """A listed lane whose broker URL is a closed port."""
    port = free_port()
    settings.LAB_LOCAL_CONTROLS = False
    settings.LAB_EXTRA_LANES = [
        *settings.LAB_EXTRA_LANES,
        {"name": "dead-lane", "broker": "redis", "url": f"redis://127.0.0.1:{port}/0"},
    ]
    return f"127.0.0.1:{port}"


def _fire(client: Client):
    client.get(reverse("lab:home"))  # a visitor's cookie, as a browser has one
    fields = {"lane": "dead-lane", "count": "1", "countdown": "0", "duration": "0"}
    return client.post(reverse("lab:home"), fields)


def test_a_visitor_sees_no_broker_address_or_os_error_on_the_lab_page(dead_lane):
    page = Client().get(reverse("lab:home")).content.decode()
    assert PLAIN in page
    assert dead_lane not in page and "refused" not in page.lower()

    refused = _fire(Client())
    assert refused.status_code == 400
    body = refused.content.decode()
    assert PLAIN in body
    assert dead_lane not in body and "refused" not in body.lower()


def test_staff_see_the_brokers_address_and_the_os_error(dead_lane):
    staff = Client()
    staff.force_login(make_user("ops", staff=True))
    page = staff.get(reverse("lab:home")).content.decode()
    assert f"Redis at {dead_lane} does not answer" in page and "To get it:" in page
    body = _fire(staff).content.decode()
    assert f"Redis at {dead_lane} does not answer" in body
    assert BROKER_NOT_ANSWERING.split(",")[0].replace("'", "&#x27;") not in body


def test_a_run_whose_broker_went_away_keeps_no_address_or_os_error_for_its_page(
    dead_lane, monkeypatch
):
    monkeypatch.setattr(  # the check passed, then the broker vanished
        firing, "lane_status", lambda lane, fresh=False: LaneStatus(lane_get(lane), True)
    )
    with pytest.raises(LaneUnavailable) as raised:
        firing.run_fire(
            learner=Learner.objects.create(),
            lane="dead-lane",
            params={"count": 2},
            check_limits=False,
        )
    assert dead_lane in str(raised.value)  # for staff and local runs, on the lab page
    run = Run.objects.get()
    assert run.error == "The dead-lane broker went away while publishing: 0 of 2 tasks went out."


def test_a_failed_attempt_tells_its_owner_no_broker_address_or_internals():

    down = LaneUnavailable("Redis at 127.0.0.1:6390 does not answer (Connection refused)")
    assert learner_text(down) == BROKER_NOT_ANSWERING
    assert learner_text(LabLimitError("redis-short is busy")) == "redis-short is busy"
    internal = learner_text(KeyError("/srv/teachlab/secret"), reference="attempt 7")
    assert "secret" not in internal and "attempt 7" in internal

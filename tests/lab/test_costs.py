"""The cost model (teachlab/lab/runs/costs.py): its arithmetic on the lab's own lanes, and the
budgets run_fire refuses by it (per run, per person per hour, per lane at once), with a
message and nothing published."""

import time

import pytest
import redis

from lessons.models import Learner
from teachlab.lab.models import Run
from teachlab.lab.runs.costs import BYTES_PER_HELD_DELIVERY, copies, run_cost
from teachlab.lab.runs.errors import LabError, LabLimitError
from teachlab.lab.runs.firing import run_fire
from teachlab.lab.runs.lanes import lane_get
from teachlab.lab.runs.params import RunParams

pytestmark = pytest.mark.django_db


def cost(lane: str, **params):
    return run_cost(RunParams(**params), lane_get(lane), now=1_000_000.0)


# --- the estimator's arithmetic ---------------------------------------------------------------


def test_a_countdown_on_the_10s_lane_makes_one_copy_per_timeout_and_sweep():
    # measured (teachlab/lab/README.md): countdown=25 on redis-short was received at 0, 10.6
    # and 20.6 s; the tuned sweep restores about half a second after each timeout
    assert cost("redis-short", countdown=25).deliveries == 3
    assert copies(25, lane_get("redis-short")) == 3
    assert copies(9.9, lane_get("redis-short")) == 1


def test_300_tasks_waiting_90s_on_the_10s_lane_cost_2700_deliveries_held_at_once():
    # issue 26 measured 2,701 deliveries for this run
    found = cost("redis-short", count=300, countdown=90)
    assert found.deliveries == 2700
    assert found.held == 2700
    assert found.memory_bytes == 2700 * BYTES_PER_HELD_DELIVERY
    assert found.seconds == 90
    assert found.text == "about 2,700 deliveries, 31 MB of worker memory, 90 s"


def test_the_issue_26_run_is_about_two_million_copies():
    found = cost("redis-short", count=2000, countdown=10800)
    assert found.deliveries == 2000 * 1029  # ceil(10800 / 10.5)
    assert found.memory_bytes > 20 * 10**9


def test_the_default_sweep_lags_so_a_45s_wait_on_a_10s_lane_is_received_once():
    # BROKER-FACTS 1: kombu's default 10 x 10 s sweep, countdown=45: received once
    assert cost("redis-default-sweep", countdown=45).deliveries == 1


def test_a_longer_timeout_makes_fewer_copies():
    assert cost("redis-long", count=10, countdown=100).deliveries == 10 * 2  # ceil(100 / 60.5)


def test_rabbit_quorum_delivers_each_task_once_and_the_worker_holds_no_waiting_copy():
    found = cost("rabbit-quorum", count=100, countdown=600)
    assert found.deliveries == 100
    lane = lane_get("rabbit-quorum")
    assert found.held == lane.workers * lane.concurrency  # only bodies running at once
    assert found.seconds == 600


def test_spacing_spreads_the_copies_and_lengthens_the_lane_time():
    found = cost("redis-long", count=3, countdown=10, spacing=60, duration=5)
    # waits 10, 70, 130 s on a 60.5 s period: 1 + 2 + 3 copies
    assert found.deliveries == 6
    assert found.seconds == 10 + 2 * 60 + 5
    # the worst moment is just before the second is due: two tasks waiting, two copies each
    assert found.held == 4


def test_acks_late_keeps_the_message_unacked_through_the_body():
    early = cost("redis-short", countdown=5, duration=30)
    late = cost("redis-short", countdown=5, duration=30, acks_late=True)
    assert early.deliveries == 1
    assert late.deliveries == 4  # ceil(35 / 10.5)


def test_expires_ends_the_redeliveries():
    # the first copy received after 15 s is revoked and acked: copies at 0, 10.5 and 21
    assert cost("redis-short", countdown=100, expires=15).deliveries == 3


def test_a_countdown_of_zero_is_one_delivery_and_nothing_waits():
    found = cost("redis-short", count=5)
    assert found.deliveries == 5
    assert found.seconds == 0


# --- refusals in run_fire ---------------------------------------------------------------------


@pytest.fixture
def lane_broker():
    """How many messages the redis-short lane holds (queued or waiting as unacked)."""
    lane = lane_get("redis-short")
    client = redis.Redis.from_url(lane.broker_url)

    def messages() -> int:
        return client.llen(lane.queue) + client.hlen("unacked")

    yield messages
    client.close()


def test_a_run_over_the_per_run_budget_is_refused_with_its_cost_and_nothing_is_published(
    lane_broker,
):
    before = lane_broker()
    # the run issue 26 found accepted, within today's task and countdown limits
    with pytest.raises(LabLimitError) as refused:
        run_fire(
            learner=Learner.objects.create(),
            lane="redis-short",
            params={"count": 2000, "countdown": 10800},
        )
    message = str(refused.value)
    assert "about 2,058,000 deliveries" in message
    assert "one run may make at most 10,000 deliveries" in message
    assert not Run.objects.exists()
    assert lane_broker() == before


def test_a_run_over_the_persons_hourly_budget_is_refused_and_the_budget_is_not_spent(
    settings, lane_broker
):
    settings.LAB_DELIVERIES_PER_HOUR = 100
    learner = Learner.objects.create()
    run_fire(learner=learner, lane="redis-short", params={"count": 20, "countdown": 25})
    before = lane_broker()
    with pytest.raises(LabLimitError) as refused:
        run_fire(learner=learner, lane="redis-short", params={"count": 20, "countdown": 25})
    message = str(refused.value)
    assert "about 60 deliveries" in message
    assert "you have about 40 left of the 100 one person may fire in an hour" in message
    assert Run.objects.count() == 1
    assert lane_broker() == before
    # a smaller run still fits what is left
    run_fire(learner=learner, lane="redis-short", params={"count": 10, "countdown": 25})


def test_the_hourly_budget_is_per_person_not_per_learner_row(settings):
    settings.LAB_DELIVERIES_PER_HOUR = 100
    one, two = Learner.objects.create(), Learner.objects.create()
    one.payer = two.payer = "pool:192.0.2.7"  # two cookie-less learners of one network
    run_fire(learner=one, lane="redis-short", params={"count": 20, "countdown": 25})
    with pytest.raises(LabLimitError, match="in an hour"):
        run_fire(learner=two, lane="redis-short", params={"count": 20, "countdown": 25})


def test_a_run_that_would_overfill_the_lane_is_refused_naming_what_it_holds(settings, lane_broker):
    settings.LAB_MAX_HELD_PER_LANE = 1000
    now = time.time()
    someone = Learner.objects.create()
    for lane in ("redis-short", "redis-long"):  # only the same lane's runs count
        Run.objects.create(
            learner=someone,
            lane=lane,
            params=RunParams(count=100, countdown=100).as_dict(),
            task_ids=["x"] * 100,
            fired_at=now,
            deadline=now + 300,
        )
    before = lane_broker()
    with pytest.raises(LabLimitError) as refused:
        run_fire(learner=Learner.objects.create(), lane="redis-short", params={"countdown": 25})
    message = str(refused.value)
    assert "redis-short is busy" in message
    assert "up to 1,000 copies" in message
    assert "takes 1,000 at once" in message
    assert Run.objects.count() == 2
    assert lane_broker() == before
    # the other lane has room for it
    run_fire(learner=Learner.objects.create(), lane="redis-long", params={"countdown": 25})


def test_a_finished_run_no_longer_takes_room_on_the_lane(settings):
    settings.LAB_MAX_HELD_PER_LANE = 1000
    now = time.time()
    Run.objects.create(
        learner=Learner.objects.create(),
        lane="redis-short",
        params=RunParams(count=100, countdown=100).as_dict(),
        task_ids=["x"] * 100,
        fired_at=now,  # its tasks' ETAs are still ahead, but it was settled (stopped)
        deadline=now + 300,
        status=Run.Status.DONE,
    )
    run_fire(learner=Learner.objects.create(), lane="redis-short", params={"countdown": 25})


@pytest.mark.parametrize(
    ("lane", "params", "says"),
    [
        ("redis-short", {"die": 1, "countdown": 25}, "Use a prefork lane"),
        ("rabbit-quorum", {"countdown": 25}, "does not answer"),
    ],
)
def test_a_run_refused_for_another_reason_spends_none_of_the_hourly_budget(
    settings, lane, params, says
):
    from teachlab.core import ratelimits
    from teachlab.lab.runs.lanes import _status_cache
    from teachlab.lab.runs.limits import DELIVERY_UNIT

    settings.LAB_DELIVERIES_PER_HOUR = 100
    settings.RABBIT_URL = "amqp://guest:guest@127.0.0.1:1//"  # no broker there
    _status_cache.clear()
    learner = Learner.objects.create()
    with pytest.raises(LabError, match=says):
        run_fire(learner=learner, lane=lane, params=params)
    hourly = ratelimits.Budget("lab-deliveries", 100 // DELIVERY_UNIT, 3600)
    assert ratelimits.remaining(hourly, learner.key) == 100 // DELIVERY_UNIT

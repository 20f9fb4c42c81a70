"""Per-learner limits and input checks in run_fire: clear messages, nothing stored."""

import pytest

from lessons.models import Learner
from teachlab.lab.models import Run
from teachlab.lab.runs import limits
from teachlab.lab.runs.errors import LabInputError, LabLimitError, LaneUnavailable
from teachlab.lab.runs.firing import run_fire
from teachlab.lab.runs.params import RunParams, params_limits_check, params_parse
from teachlab.lab.runs.reading import run_for_learner

pytestmark = pytest.mark.django_db


def test_a_local_run_allows_an_1800_task_batch():
    params_limits_check(RunParams(count=1800, countdown=60))
    limits.active_runs_check(active_runs=0)


def test_too_many_tasks_are_refused_with_the_limit_named(settings):
    settings.LAB_MAX_TASKS_PER_RUN = 100
    with pytest.raises(LabLimitError, match="at most 100 tasks; you asked for 101"):
        run_fire(learner=Learner.objects.create(), lane="redis-short", params={"count": 101})
    assert not Run.objects.exists()


def test_a_countdown_beyond_the_limit_is_refused_with_both_values(settings):
    settings.LAB_MAX_COUNTDOWN = 600
    with pytest.raises(LabLimitError, match=r"due 20 min after firing.*at most 10 min"):
        run_fire(learner=Learner.objects.create(), lane="redis-short", params={"countdown": 1200})


def test_spacing_counts_toward_the_longest_countdown(settings):
    settings.LAB_MAX_COUNTDOWN = 600
    with pytest.raises(LabLimitError, match="Shorten the countdown or the spacing"):
        run_fire(
            learner=Learner.objects.create(),
            lane="redis-short",
            params={"count": 100, "countdown": 10, "spacing": 10},
        )


def test_too_many_runs_at_once_are_refused(settings):
    settings.LAB_MAX_RUNS_AT_ONCE = 1
    learner = Learner.objects.create()
    Run.objects.create(learner=learner, lane="redis-short", task_ids=["x"], deadline=9e12)
    with pytest.raises(LabLimitError, match="already have 1 runs going"):
        run_fire(learner=learner, lane="redis-short", params={"countdown": 1})


def test_the_per_minute_rate_limit_answers_with_a_wait(settings):
    settings.LAB_RUNS_PER_MINUTE = 2
    learner = Learner.objects.create()
    limits.rate_limit_take(learner=learner)
    limits.rate_limit_take(learner=learner)
    with pytest.raises(LabLimitError, match=r"2 runs a minute; try again in \d+ s"):
        limits.rate_limit_take(learner=learner)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"countdown": "-5"}, "countdown cannot be less than 0"),
        ({"countdown": "1e12"}, "far beyond anything the lab can run"),
        ({"countdown": "soon"}, "countdown must be a number"),
        ({"countdown": "nan"}, "finite"),
        ({"count": "2.5"}, "count must be a whole number"),
        ({"count": 0}, "count cannot be less than 1"),
        ({"eta": "yesterday"}, "eta must be a date and time"),
        ({"eta": "2001-01-01T00:00:00Z"}, "eta is in the past"),
        ({"colour": "red"}, "Unknown run parameter"),
        ({"retry": True}, "retry only matters with fail"),
        ({"guard": "maybe"}, "guard must be on or off"),
    ],
)
def test_absurd_parameters_get_a_message_naming_the_field(raw, message):
    with pytest.raises(LabInputError, match=message):
        params_parse(raw)


def test_form_strings_are_understood():
    p = params_parse({"countdown": "45", "count": "3", "acks_late": "on", "expires": ""})
    assert (p.countdown, p.count, p.acks_late, p.expires) == (45.0, 3, True, None)


def test_an_unreachable_broker_is_a_clear_error_and_stores_nothing(settings):
    settings.LAB_EXTRA_LANES = [
        {"name": "redis-nowhere", "broker": "redis", "url": "redis://127.0.0.1:1/1"}
    ]
    with pytest.raises(LaneUnavailable, match="does not answer.*To get it: apt install redis"):
        run_fire(learner=Learner.objects.create(), lane="redis-nowhere", params={})
    assert not Run.objects.exists()


def test_an_unknown_lane_is_refused_with_the_choices():
    with pytest.raises(LabInputError, match="no lane called 'fast'.*redis-short"):
        run_fire(learner=Learner.objects.create(), lane="fast", params={})


def test_a_learner_cannot_look_up_someone_elses_run():
    owner, other = Learner.objects.create(), Learner.objects.create()
    run = Run.objects.create(learner=owner, lane="redis-short", task_ids=["x"])
    assert run_for_learner(run.id, owner) == run
    assert run_for_learner(run.id, other) is None
    assert run_for_learner("not-a-run", owner) is None
    assert run_for_learner(None, owner) is None


def test_run_ids_are_long_and_unguessable():
    learner = Learner.objects.create()
    ids = {Run.objects.create(learner=learner, lane="redis-short").id for _ in range(20)}
    assert len(ids) == 20
    assert all(len(run_id) >= 20 for run_id in ids)


def test_a_broker_that_goes_away_while_publishing_leaves_a_failed_run_that_says_so(
    settings, monkeypatch
):
    """The broker answered the check, then vanished (here: the check is made to pass, the
    address answers nothing) - the run is kept as failed with how many tasks went out."""
    from teachlab.lab.runs import firing
    from teachlab.lab.runs.lanes import LaneStatus, lane_get

    settings.LAB_EXTRA_LANES = [
        {"name": "redis-vanishing", "broker": "redis", "url": "redis://127.0.0.1:1/1"}
    ]
    monkeypatch.setattr(
        firing, "lane_status", lambda lane, fresh=False: LaneStatus(lane_get(lane), True)
    )
    with pytest.raises(LaneUnavailable, match=r"went away while publishing: 0 of 2 tasks"):
        run_fire(
            learner=Learner.objects.create(),
            lane="redis-vanishing",
            params={"count": 2},
            check_limits=False,
        )
    run = Run.objects.get()
    assert run.status == Run.Status.FAILED
    assert "0 of 2 tasks went out" in run.error


def test_a_class_wide_quota_stops_the_next_learner_when_the_class_has_used_it(settings):
    settings.LAB_RUNS_PER_MINUTE = 10
    settings.LAB_CLASS_RUNS_PER_MINUTE = 3
    for _ in range(3):
        limits.rate_limit_take(learner=Learner.objects.create())
    with pytest.raises(LabLimitError, match="whole class may fire 3 runs a minute"):
        limits.rate_limit_take(learner=Learner.objects.create())
    settings.LAB_CLASS_RUNS_PER_MINUTE = 0  # no class-wide quota outside classroom mode
    limits.rate_limit_take(learner=Learner.objects.create())

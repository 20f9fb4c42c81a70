"""The checks engine reads the numbers a learner would read off the receipts log."""

from __future__ import annotations

from teachlab.lab.experiments.charts import copies_histogram, receipts_over_time
from teachlab.lab.experiments.checks import check_evaluate
from teachlab.lab.experiments.metrics import run_metric
from teachlab.lab.experiments.observe import observation_from_events


def ev(kind, task, t, worker="w1", redelivered=False, eta=None, **data):
    return {
        "kind": kind,
        "task_id": task,
        "t": t,
        "at": 1000.0 + t,
        "worker": worker,
        "redelivered": redelivered,
        "eta": eta,
        "data": data,
    }


def storm():
    """One countdown=25 task on a 10 s timeout: three deliveries, three runs at 25 s."""
    events = [
        ev("received", "a", 0.1, eta=1025.0),
        ev("received", "a", 10.9, "w2", True, eta=1025.0),
        ev("received", "a", 21.8, "w1", True, eta=1025.0),
    ]
    for i, worker in enumerate(("w1", "w2", "w1")):
        events += [ev("started", "a", 25.0 + i * 0.01, worker), ev("finished", "a", 25.1, worker)]
    return observation_from_events(task_ids=["a"], params={"countdown": 25}, events=events)


def check(observations, **spec):
    spec.setdefault("run", "main")
    spec.setdefault("per", "run")
    return check_evaluate(check=spec, observations=observations)


def test_a_storm_passes_receipts_and_on_time_checks_with_observed_values():
    obs = {"main": storm()}
    result = check(obs, what="receipts", per="task", at_least=3, says="received thrice")
    assert result.passed and result.observed == "3"
    assert check(obs, what="redelivered", per="task", at_least=2).passed
    late = check(obs, what="last_start_after_due", per="task", at_most=2)
    assert late.passed and late.observed == "0.02"


def test_a_failing_check_reports_what_was_seen():
    result = check({"main": storm()}, what="receipts", per="task", equals=1, says="once")
    assert not result.passed
    assert result.observed == "3"
    assert result.expected == "every task: receipts = 1"


def test_guarded_copies_are_not_counted_as_executions():
    events = [
        ev("received", "a", 0),
        ev("received", "a", 11, redelivered=True),
        ev("started", "a", 25),
        ev("finished", "a", 25.1),
        ev("started", "a", 25, "w2"),
        ev("suppressed", "a", 25.01, "w2"),
    ]
    obs = observation_from_events(task_ids=["a"], params={"countdown": 25}, events=events)
    assert run_metric(observation=obs, what="executions") == 1
    assert run_metric(observation=obs, what="suppressed") == 1
    assert run_metric(observation=obs, what="amplification") == 1


def test_a_failure_that_retries_counts_as_a_retry_not_a_failure():
    events = [
        ev("received", "a", 0),
        ev("started", "a", 0.1),
        ev("failed", "a", 0.2, retrying=True),
        ev("received", "a", 1.3),
        ev("started", "a", 1.4),
        ev("finished", "a", 1.5),
    ]
    obs = observation_from_events(task_ids=["a"], params={}, events=events)
    assert run_metric(observation=obs, what="retries") == 1
    assert run_metric(observation=obs, what="failures") == 0
    assert run_metric(observation=obs, what="completions") == 1


def test_copies_running_at_the_same_time_are_counted():
    events = [
        ev("started", "a", 0),
        ev("started", "a", 11, "w2"),
        ev("started", "a", 22, "w1"),
        ev("finished", "a", 25),
        ev("finished", "a", 36, "w2"),
    ]
    obs = observation_from_events(task_ids=["a"], params={"duration": 25}, events=events)
    assert run_metric(observation=obs, what="max_running_at_once") == 3


def test_a_task_that_never_started_fails_a_timing_check_with_never():
    obs = observation_from_events(task_ids=["a"], params={}, events=[ev("received", "a", 0)])
    result = check({"main": obs}, what="start_after_due", per="task", at_most=2)
    assert not result.passed and result.observed == "never"


def test_a_bound_can_be_another_runs_metric():
    few = observation_from_events(task_ids=["a"], params={}, events=[ev("received", "a", 0)])
    obs = {"main": few, "tuned": storm()}
    result = check(obs, what="receipts", less_than={"run": "tuned", "what": "receipts"})
    assert result.passed and "receipts of run 'tuned'" in result.expected


def test_due_time_comes_from_the_eta_and_falls_back_to_the_schedule():
    events = [ev("received", "a", 0.0, eta=1025.5)]
    obs = observation_from_events(
        task_ids=["a", "b"], params={"countdown": 25, "spacing": 2}, events=events
    )
    assert obs.tasks == {"a": 25.5, "b": 27.0}


def test_histogram_and_receipts_over_time_for_a_batch():
    events = [ev("received", t, 0) for t in "abc"] + [ev("received", "c", 11, redelivered=True)]
    events += [ev("started", t, 12) for t in "abcc"]
    obs = observation_from_events(task_ids=list("abc"), params={}, events=events)
    assert copies_histogram(observation=obs) == [(1, 2), (2, 1)]
    buckets = receipts_over_time(observation=obs, bucket=5)
    assert buckets[0] == (0, 3, 0) and buckets[2] == (10, 0, 1)


def test_a_prediction_matches_counts_exactly_and_ratios_roughly():
    from teachlab.lab.experiments.catalog import experiment_get
    from teachlab.lab.experiments.prediction import prediction_verdict

    within = experiment_get(slug="countdown-beyond-timeout")
    obs = {"main": storm()}
    assert prediction_verdict(experiment=within, observations=obs, value=3)["matched"]
    assert not prediction_verdict(experiment=within, observations=obs, value=4)["matched"]
    verdict = prediction_verdict(experiment=within, observations=obs, value=None)
    assert verdict["observed_label"] == "3" and not verdict["matched"]


def test_a_choice_prediction_is_judged_by_what_the_runs_showed():
    from teachlab.lab.experiments.catalog import experiment_get
    from teachlab.lab.experiments.prediction import prediction_verdict

    expires = experiment_get(slug="expires-before-due")
    revoked = observation_from_events(
        task_ids=["a"],
        params={"countdown": 8},
        events=[ev("received", "a", 0), ev("revoked", "a", 8)],
    )
    verdict = prediction_verdict(experiment=expires, observations={"main": revoked}, value="runs")
    assert verdict["observed"] == "revoked" and not verdict["matched"]
    assert verdict["observed_label"].startswith("It is revoked")


def test_receipts_against_ceil_of_wait_over_timeout_and_messages_left():
    from teachlab.lab.experiments.metrics import Event, Observation, run_metric, task_metric

    events = [Event("received", "a", t) for t in (0.1, 10.6, 21.2)] + [Event("received", "b", 0.1)]
    obs = Observation(tasks={"a": 25.0, "b": 25.0}, events=events, visibility_timeout=10)
    assert task_metric(observation=obs, what="receipts_vs_ceil") == {"a": 0.0, "b": -2.0}
    assert run_metric(observation=obs, what="messages_left") is None
    obs.messages_left = 0
    assert run_metric(observation=obs, what="messages_left") == 0
    no_timeout = Observation(tasks={"a": 25.0}, events=events)
    assert task_metric(observation=no_timeout, what="receipts_vs_ceil") == {"a": None}

"""The checks engine on hand-built runs with several tasks, so a check that every task must pass
cannot be satisfied by one task, and every bound is tried on both sides of its edge.

These exist to kill mutants (issue 14): `all` turned into `any`, a bound made always true, a
metric reading the wrong event kind.
"""

from __future__ import annotations

import pytest

from teachlab.lab.experiments.checks import (
    Event,
    Observation,
    check_evaluate,
    copies_histogram,
    describe_bound,
    receipts_over_time,
    run_metric,
    task_metric,
)


def _copy(task: str, received: float, started: float | None, *, worker="w1", redelivered=False):
    events = [Event("received", task, received, worker, redelivered)]
    if started is not None:
        events += [Event("started", task, started, worker), Event("finished", task, started + 0.1)]
    return events


def two_tasks() -> Observation:
    """Task a: delivered three times, ran three times at its due time (10 s).
    Task b: delivered once, ran once at 20.5 s, half a second after its due time."""
    events = (
        _copy("a", 0.1, 10.0)
        + _copy("a", 5.1, 10.01, worker="w2", redelivered=True)
        + _copy("a", 9.9, 10.02, redelivered=True)
        + _copy("b", 0.2, 20.5)
    )
    return Observation(tasks={"a": 10.0, "b": 20.0}, events=events, duration=21.0)


def one_never_ran() -> Observation:
    """Task a ran once; task b was delivered and then revoked, so its body never started."""
    events = _copy("a", 0.1, 1.0) + [Event("received", "b", 0.2), Event("revoked", "b", 3.0)]
    return Observation(tasks={"a": 1.0, "b": 3.0}, events=events, duration=4.0)


def check(obs: Observation, **spec):
    spec.setdefault("run", "main")
    return check_evaluate(check=spec, observations={"main": obs})


# --- per task: every task, not any task ------------------------------------------------------


def test_a_per_task_check_fails_when_one_task_of_two_misses_it():
    result = check(two_tasks(), what="receipts", per="task", at_least=3)
    assert not result.passed
    assert result.observed == "3, 1"
    assert result.values == (3.0, 1.0)


def test_a_per_task_check_passes_when_every_task_meets_it():
    assert check(two_tasks(), what="receipts", per="task", at_least=1).passed


def test_a_per_task_check_fails_when_one_task_never_did_the_thing():
    obs = one_never_ran()
    result = check(obs, what="first_start", per="task", at_least=0)
    assert not result.passed
    assert result.observed == "1, never"
    # The same metric on the task that did start passes alone.
    alone = Observation(tasks={"a": 1.0}, events=obs.of_task("a"), duration=4.0)
    assert check(alone, what="first_start", per="task", at_least=0).passed


def test_a_per_task_check_with_no_tasks_fails():
    empty = Observation(tasks={}, events=[])
    result = check(empty, what="receipts", per="task", at_least=0)
    assert not result.passed
    assert result.observed == "no tasks were fired"


def test_a_run_check_on_totals_passes_where_the_per_task_check_fails():
    obs = two_tasks()
    assert check(obs, what="receipts", per="run", equals=4).passed
    assert not check(obs, what="receipts", per="task", equals=4).passed


# --- between: both bounds count ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "passes"),
    [
        (0.0, 1.0, True),  # b started 0.5 s late, a on time
        (0.0, 0.5, True),  # upper edge included
        (0.0, 0.49, False),  # b above the upper bound
        (0.01, 1.0, False),  # a below the lower bound
        (-5.0, -1.0, False),  # both below
        (1.0, 5.0, False),  # both above
    ],
)
def test_between_holds_only_inside_both_bounds(low, high, passes):
    result = check(two_tasks(), what="start_after_due", per="task", between=[low, high])
    assert result.passed is passes
    assert result.expected == f"every task: start_after_due in {describe_bound([low, high])}"


@pytest.mark.parametrize(
    ("low", "high", "passes"),
    [(4, 4, True), (3, 5, True), (5, 9, False), (0, 3, False), (4.5, 9, False)],
)
def test_between_on_a_run_total(low, high, passes):
    assert check(two_tasks(), what="receipts", between=[low, high]).passed is passes


# --- the other bounds, on both sides of the edge ---------------------------------------------


@pytest.mark.parametrize(
    ("bound", "value", "passes"),
    [
        ("at_least", 4, True),
        ("at_least", 5, False),
        ("at_most", 4, True),
        ("at_most", 3, False),
        ("equals", 4, True),
        ("equals", 3, False),
        ("equals", 5, False),
        ("more_than", 3, True),
        ("more_than", 4, False),
        ("less_than", 5, True),
        ("less_than", 4, False),
    ],
)
def test_each_bound_is_judged_at_its_edge(bound, value, passes):
    """Four receipts in all: each bound passes on one side of 4 and fails on the other."""
    result = check(two_tasks(), what="receipts", **{bound: value})
    assert result.passed is passes
    assert result.observed == "4"


def test_a_bound_taken_from_another_run_is_scaled_and_shifted():
    obs = {"main": two_tasks(), "other": one_never_ran()}
    spec = {"run": "main", "what": "receipts"}
    ref = {"run": "other", "what": "receipts"}  # 2 receipts in the other run
    assert check_evaluate(check={**spec, "equals": {**ref, "times": 2}}, observations=obs).passed
    assert check_evaluate(check={**spec, "equals": {**ref, "plus": 2}}, observations=obs).passed
    assert not check_evaluate(check={**spec, "equals": ref}, observations=obs).passed
    result = check_evaluate(check={**spec, "at_least": {**ref, "times": 3}}, observations=obs)
    assert not result.passed
    assert result.expected == "receipts >= 3 × receipts of run 'other'"


def test_a_bound_on_a_value_the_other_run_never_showed_fails_and_says_so():
    obs = {"main": two_tasks(), "other": Observation(tasks={}, events=[])}
    result = check_evaluate(
        check={
            "run": "main",
            "what": "receipts",
            "at_least": {"run": "other", "what": "min_first_start"},
        },
        observations=obs,
    )
    assert not result.passed
    assert result.observed == "the reference value was never observed"


# --- metrics read the right kind of event ------------------------------------------------------


def test_receipts_count_deliveries_and_executions_count_bodies_that_ran():
    obs = one_never_ran()
    assert task_metric(observation=obs, what="receipts") == {"a": 1.0, "b": 1.0}
    assert task_metric(observation=obs, what="executions") == {"a": 1.0, "b": 0.0}
    assert run_metric(observation=obs, what="receipts") == 2.0
    assert run_metric(observation=obs, what="executions") == 1.0
    assert run_metric(observation=obs, what="revoked") == 1.0


def test_a_suppressed_copy_is_a_receipt_but_not_an_execution():
    events = _copy("a", 0.1, 5.0) + [
        Event("received", "a", 2.0, "w2", True),
        Event("started", "a", 5.0, "w2"),
        Event("suppressed", "a", 5.0, "w2"),
    ]
    obs = Observation(tasks={"a": 5.0}, events=events)
    assert run_metric(observation=obs, what="receipts") == 2.0
    assert run_metric(observation=obs, what="executions") == 1.0
    assert run_metric(observation=obs, what="suppressed") == 1.0
    assert run_metric(observation=obs, what="redelivered") == 1.0
    assert run_metric(observation=obs, what="duplicates") == 1.0
    assert run_metric(observation=obs, what="tasks_run_more_than_once") == 0.0


def test_run_metrics_over_two_tasks():
    obs = two_tasks()
    assert run_metric(observation=obs, what="tasks") == 2.0
    assert run_metric(observation=obs, what="duplicates") == 2.0
    assert run_metric(observation=obs, what="amplification") == 2.0
    assert run_metric(observation=obs, what="tasks_run_more_than_once") == 1.0
    assert run_metric(observation=obs, what="max_receipts") == 3.0
    assert run_metric(observation=obs, what="min_receipts") == 1.0
    assert run_metric(observation=obs, what="completions") == 4.0
    assert run_metric(observation=obs, what="redelivered") == 2.0
    assert run_metric(observation=obs, what="max_workers") == 2.0
    assert run_metric(observation=obs, what="min_workers") == 1.0


def test_time_metrics_per_task():
    obs = two_tasks()
    assert task_metric(observation=obs, what="first_receipt") == {"a": 0.1, "b": 0.2}
    assert task_metric(observation=obs, what="last_receipt") == {"a": 9.9, "b": 0.2}
    assert task_metric(observation=obs, what="first_start") == {"a": 10.0, "b": 20.5}
    assert task_metric(observation=obs, what="start_after_due") == {"a": 0.0, "b": 0.5}
    assert task_metric(observation=obs, what="last_start_after_due") == {"a": 0.02, "b": 0.5}
    assert task_metric(observation=obs, what="running_at_once") == {"a": 3.0, "b": 1.0}


def test_a_copy_that_finished_before_the_next_started_is_not_running_at_once():
    events = _copy("a", 0.0, 1.0) + _copy("a", 2.0, 3.0)
    obs = Observation(tasks={"a": 1.0}, events=events)
    assert task_metric(observation=obs, what="running_at_once") == {"a": 1.0}


def test_failures_retries_and_an_empty_run_have_no_amplification():
    events = [
        Event("received", "a", 0.0),
        Event("started", "a", 0.1),
        Event("failed", "a", 0.2, retrying=True),
        Event("received", "a", 1.2),
        Event("started", "a", 1.3),
        Event("failed", "a", 1.4),
    ]
    obs = Observation(tasks={"a": 0.0}, events=events)
    assert run_metric(observation=obs, what="retries") == 1.0
    assert run_metric(observation=obs, what="failures") == 1.0
    assert run_metric(observation=obs, what="completions") == 0.0
    assert run_metric(observation=Observation(tasks={}, events=[]), what="amplification") is None


def test_histogram_and_receipts_over_time_split_first_deliveries_from_redeliveries():
    obs = two_tasks()
    assert copies_histogram(observation=obs) == [(1, 1), (3, 1)]
    buckets = receipts_over_time(observation=obs, bucket=5.0)
    assert buckets[0] == (0.0, 2, 0)  # a and b first delivered
    assert buckets[1] == (5.0, 0, 2)  # a's two redeliveries at 5.1 and 9.9
    assert len(buckets) == 5  # up to the run's duration (21 s)

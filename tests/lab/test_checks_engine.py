"""The checks engine on hand-built runs with several tasks, so a check that every task must pass
cannot be satisfied by one task, and every bound is tried on both sides of its edge.

These exist to kill mutants (issue 14): `all` turned into `any`, a bound made always true, a
metric reading the wrong event kind.
"""

from __future__ import annotations

import pytest

from teachlab.lab.eventlog.runstate import totals
from teachlab.lab.experiments.charts import copies_histogram, receipts_over_time
from teachlab.lab.experiments.checks import CheckResult, bound_value, check_evaluate, describe_bound
from teachlab.lab.experiments.checks import _describe_values as describe_values
from teachlab.lab.experiments.checks import _fmt as check_fmt
from teachlab.lab.experiments.metrics import (
    COUNTED,
    RUN_METRICS,
    TASK_METRICS,
    Event,
    Observation,
    metric_names,
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


# --- whole results, so every field of a CheckResult is pinned (issue 14 mutants) -------------


def test_a_run_check_result_in_full_with_and_without_its_own_words():
    obs = two_tasks()
    assert check(obs, what="receipts", at_least=4) == CheckResult(
        "receipts >= 4", "main", True, "receipts >= 4", "4", (4.0,)
    )
    assert check(obs, what="receipts", at_least=4, says="four in all") == CheckResult(
        "four in all", "main", True, "receipts >= 4", "4", (4.0,)
    )
    # `per: run` written out is the same as leaving it out.
    assert check(obs, what="receipts", per="run", at_least=4) == check(
        obs, what="receipts", at_least=4
    )


def test_a_per_task_check_result_in_full():
    result = check(two_tasks(), what="receipts", per="task", at_most=3, says="few enough")
    assert result == CheckResult(
        "few enough", "main", True, "every task: receipts <= 3", "3, 1", (3.0, 1.0)
    )


def test_the_run_checked_is_the_one_named_not_another():
    obs = {"main": two_tasks(), "other": one_never_ran()}
    result = check_evaluate(
        check={"run": "other", "what": "receipts", "equals": 2}, observations=obs
    )
    assert result == CheckResult("receipts = 2", "other", True, "receipts = 2", "2", (2.0,))
    per_task = check_evaluate(
        check={"run": "other", "what": "receipts", "per": "task", "equals": 1},
        observations=obs,
    )
    assert per_task.passed and per_task.run == "other" and per_task.values == (1.0, 1.0)


def test_the_failing_early_results_in_full():
    empty = Observation(tasks={}, events=[])
    assert check(empty, what="receipts", per="task", at_least=0, says="s") == CheckResult(
        "s", "main", False, "every task: receipts >= 0", "no tasks were fired"
    )
    obs = {"main": two_tasks(), "other": empty}
    never = {"run": "other", "what": "min_first_start"}
    for per, prefix in (("run", ""), ("task", "every task: ")):
        result = check_evaluate(
            check={"run": "main", "what": "receipts", "per": per, "at_least": never},
            observations=obs,
        )
        expected = f"{prefix}receipts >= min_first_start of run 'other'"
        assert result == CheckResult(
            expected, "main", False, expected, "the reference value was never observed"
        )


def test_a_run_value_never_observed_fails_every_bound_and_reads_never():
    obs = Observation(tasks={"a": 1.0}, events=[Event("received", "a", 0.1)])
    for bound in ("at_least", "at_most", "equals", "more_than", "less_than"):
        result = check(obs, what="min_first_start", **{bound: 0})
        assert not result.passed
        assert (result.observed, result.values) == ("never", (None,))
    assert not check(obs, what="messages_left", between=[0, 5]).passed


def test_as_dict_leaves_out_the_values():
    result = check(two_tasks(), what="receipts", at_least=4, says="four", id="four-receipts")
    assert result.as_dict() == {
        "id": "four-receipts",
        "says": "four",
        "run": "main",
        "passed": True,
        "expected": "receipts >= 4",
        "observed": "4",
    }


# --- bounds and how they read ------------------------------------------------------------------


def test_bound_values():
    runs = {"other": one_never_ran()}  # 2 receipts, executions 1
    assert bound_value(bound=[1, "2.5"], observations={}) == (1.0, 2.5)
    assert bound_value(bound=(0, 3), observations={}) == (0.0, 3.0)
    assert bound_value(bound="4", observations={}) == 4.0
    ref = {"run": "other", "what": "receipts"}
    assert bound_value(bound=ref, observations=runs) == 2.0
    assert bound_value(bound={**ref, "times": 1.5}, observations=runs) == 3.0
    assert bound_value(bound={**ref, "plus": -0.5}, observations=runs) == 1.5
    assert bound_value(bound={**ref, "times": 3, "plus": 1}, observations=runs) == 7.0
    never = {"run": "other", "what": "messages_left", "times": 2, "plus": 1}
    assert bound_value(bound=never, observations=runs) is None


def test_a_between_bound_given_as_a_tuple():
    assert check(two_tasks(), what="receipts", between=(3, 5)).passed
    assert not check(two_tasks(), what="receipts", between=(5, 6)).passed


def test_bounds_read_as_written():
    assert describe_bound([1, 2.5]) == "[1, 2.5]"
    assert describe_bound((0.25, 10)) == "[0.25, 10]"
    assert describe_bound(3) == "3"
    assert describe_bound("0.5") == "0.5"
    ref = {"run": "calm", "what": "receipts"}
    assert describe_bound(ref) == "receipts of run 'calm'"
    assert describe_bound({**ref, "times": 1}) == "receipts of run 'calm'"
    assert describe_bound({**ref, "times": 2}) == "2 × receipts of run 'calm'"
    assert describe_bound({**ref, "plus": 0}) == "receipts of run 'calm'"
    assert describe_bound({**ref, "plus": 3}) == "receipts of run 'calm' + 3"
    assert describe_bound({**ref, "plus": -2.5}) == "receipts of run 'calm' − 2.5"
    assert describe_bound({**ref, "times": 0.5, "plus": 1}) == "0.5 × receipts of run 'calm' + 1"


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "never"), (3.0, "3"), (0.0, "0"), (-2.0, "-2"), (0.5, "0.5"), (0.1, "0.1"),
     (1.25, "1.25"), (2.345, "2.35"), (10.101, "10.1"), (7, "7"), (10.0, "10"), (100, "100"),
     (1.999, "2"), (0.004, "0"), (-0.001, "0"), (-0.5, "-0.5"), (2.0004, "2")],
)  # fmt: skip
def test_numbers_read_without_trailing_zeros(value, text):
    assert check_fmt(value) == text


def test_a_few_values_are_listed_and_many_are_summed_up():
    assert describe_values([]) == ""
    assert describe_values([1.0, None, 2.5, 3.0]) == "1, never, 2.5, 3"
    assert describe_values([3.0, 1.0, 2.0, 5.0, 4.0]) == "1–5 over 5 tasks"
    assert describe_values([3.0, None, 2.0, 0.5, None, 4.0]) == "0.5–4 over 6 tasks; never for 2"
    assert describe_values([None] * 5) == "never for all 5 tasks"


def test_metric_names_per_run_and_per_task():
    assert metric_names("task") == tuple(TASK_METRICS)
    assert metric_names("run") == tuple(RUN_METRICS)
    assert "tasks" in metric_names("run") and "tasks" not in metric_names("task")


# --- metrics at their edges --------------------------------------------------------------------


def test_times_are_rounded_to_hundredths():
    events = [
        Event("received", "a", 0.234),
        Event("received", "a", 4.567, redelivered=True),
        Event("started", "a", 10.004),
        Event("started", "a", 10.126),
    ]
    obs = Observation(tasks={"a": 10.0}, events=events)
    assert task_metric(observation=obs, what="first_receipt") == {"a": 0.23}
    assert task_metric(observation=obs, what="last_receipt") == {"a": 4.57}
    assert task_metric(observation=obs, what="first_start") == {"a": 10.0}
    assert task_metric(observation=obs, what="start_after_due") == {"a": 0.0}
    assert task_metric(observation=obs, what="last_start_after_due") == {"a": 0.13}


def test_time_metrics_read_only_their_kind_and_are_none_without_it():
    events = [
        Event("started", "a", 0.5),
        Event("received", "a", 1.0),
        Event("received", "a", 2.0),
        Event("finished", "a", 3.0),
    ]
    obs = Observation(tasks={"a": 1.5, "b": 2.0}, events=events)
    assert task_metric(observation=obs, what="first_receipt") == {"a": 1.0, "b": None}
    assert task_metric(observation=obs, what="last_receipt") == {"a": 2.0, "b": None}
    assert task_metric(observation=obs, what="first_start") == {"a": 0.5, "b": None}
    assert task_metric(observation=obs, what="start_after_due") == {"a": -1.0, "b": None}
    assert task_metric(observation=obs, what="last_start_after_due") == {"a": -1.0, "b": None}
    assert run_metric(observation=obs, what="max_first_receipt") == 1.0
    assert run_metric(observation=obs, what="min_last_receipt") == 2.0


def test_counts_read_only_their_kind():
    events = [
        Event("received", "a", 0.0, "w1"),
        Event("received", "a", 0.5, "w2", True),
        Event("received", "a", 0.6, "w2", True),
        Event("started", "a", 1.0, "w1"),
        Event("started", "a", 1.1, "w2"),
        Event("started", "a", 1.2, "w3"),
        Event("suppressed", "a", 1.2, "w3"),
        Event("finished", "a", 2.0),
        Event("failed", "a", 2.1, retrying=True),
        Event("failed", "a", 2.2, worker_lost=True),
        Event("revoked", "a", 3.0),
        Event("revoked", "a", 3.1),
    ]
    obs = Observation(tasks={"a": 1.0}, events=events)
    counts = {name: task_metric(observation=obs, what=name)["a"] for name in COUNTED}
    assert counts == {
        "receipts": 3.0,
        "redelivered": 2.0,
        "executions": 2.0,
        "completions": 1.0,
        "failures": 1.0,
        "retries": 1.0,
        "suppressed": 1.0,
        "revoked": 2.0,
        "worker_lost": 1.0,
    }
    assert task_metric(observation=obs, what="workers") == {"a": 2.0}  # w3 only started
    assert run_metric(observation=obs, what="tasks_run_more_than_once") == 1.0


def test_a_delivery_with_no_worker_name_is_not_a_worker():
    events = [Event("received", "a", 0.0, ""), Event("received", "a", 1.0, "w1", True)]
    obs = Observation(tasks={"a": 0.0}, events=events)
    assert task_metric(observation=obs, what="workers") == {"a": 1.0}


def test_receipts_against_the_visibility_timeout():
    events = [Event("received", "a", t) for t in (0.0, 10.0, 20.0)] + [
        Event("received", "b", 0.0),
        Event("received", "c", 0.0),
    ]
    tasks = {"a": 25.0, "b": 0.0, "c": 4.0}  # ceil(2.5) = 3; at least 1; ceil(0.4) = 1
    obs = Observation(tasks=tasks, events=events, visibility_timeout=10.0)
    assert task_metric(observation=obs, what="receipts_vs_ceil") == {"a": 0.0, "b": 0.0, "c": 0.0}
    late = Observation(tasks={"a": 35.0}, events=events, visibility_timeout=10.0)
    assert task_metric(observation=late, what="receipts_vs_ceil") == {"a": -1.0}
    for timeout in (None, 0.0):
        unknown = Observation(tasks=tasks, events=events, visibility_timeout=timeout)
        assert task_metric(observation=unknown, what="receipts_vs_ceil") == dict.fromkeys(tasks)


def test_running_at_once_at_equal_times_counts_the_finish_first():
    # The second copy starts the moment the first finishes, logged before that finish.
    events = [
        Event("started", "a", 0.0),
        Event("started", "a", 1.0),
        Event("finished", "a", 1.0),
        Event("finished", "a", 2.0),
    ]
    obs = Observation(tasks={"a": 0.0}, events=events)
    assert task_metric(observation=obs, what="running_at_once") == {"a": 1.0}


def test_running_at_once_ends_on_every_kind_of_finish_and_nothing_else():
    for finish in ("finished", "failed", "suppressed"):
        events = [
            Event("started", "a", 0.0),
            Event(finish, "a", 1.0),
            Event("received", "a", 1.5, redelivered=True),  # not an end
            Event("started", "a", 2.0),
            Event("revoked", "a", 2.5),  # not an end either
            Event("started", "a", 3.0),
        ]
        obs = Observation(tasks={"a": 0.0}, events=events)
        assert task_metric(observation=obs, what="running_at_once") == {"a": 2.0}, finish


def test_running_at_once_ignores_a_finish_without_a_start():
    events = [
        Event("finished", "a", 0.0),
        Event("failed", "a", 0.5),
        Event("started", "a", 1.0),
        Event("started", "a", 2.0),
    ]
    obs = Observation(tasks={"a": 0.0}, events=events)
    assert task_metric(observation=obs, what="running_at_once") == {"a": 2.0}
    assert task_metric(observation=Observation({"a": 0.0}, []), what="running_at_once") == {
        "a": 0.0
    }


def test_run_totals_extremes_and_ratios_over_tasks_that_did_nothing():
    events = _copy("a", 0.0, 1.0) + _copy("a", 0.5, 1.5) + _copy("b", 0.0, 2.0)
    obs = Observation(tasks={"a": 1.0, "b": 1.0, "c": 1.0}, events=events)
    assert run_metric(observation=obs, what="executions") == 3.0
    assert run_metric(observation=obs, what="amplification") == 1.0
    # 3 receipts for 3 tasks, but a's second copy is an extra one whatever c did.
    assert run_metric(observation=obs, what="duplicates") == 1.0
    assert run_metric(observation=obs, what="min_executions") == 0.0
    assert run_metric(observation=obs, what="max_executions") == 2.0
    assert run_metric(observation=obs, what="min_first_start") == 1.0
    assert run_metric(observation=obs, what="max_first_start") == 2.0
    assert run_metric(observation=obs, what="tasks_run_more_than_once") == 1.0
    short = Observation(tasks={"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0}, events=events)
    assert run_metric(observation=short, what="duplicates") == 1.0  # fewer receipts than tasks
    thirds = Observation(tasks={"a": 1.0, "b": 1.0, "c": 1.0}, events=_copy("a", 0.0, 1.0))
    assert run_metric(observation=thirds, what="amplification") == 0.33
    assert run_metric(observation=thirds, what="min_first_start") == 1.0
    assert run_metric(observation=thirds, what="tasks") == 3.0


def test_the_histogram_counts_tasks_that_never_ran_as_zero():
    assert copies_histogram(observation=one_never_ran()) == [(0, 1), (1, 1)]
    assert copies_histogram(observation=one_never_ran(), what="receipts") == [(1, 2)]


def test_receipts_over_time_in_full():
    events = [
        Event("received", "a", 0.2),
        Event("started", "a", 0.3),
        Event("received", "a", 2.7, redelivered=True),
        Event("received", "b", 2.9),
        Event("received", "b", 2.95, redelivered=True),
    ]
    obs = Observation(tasks={"a": 0.0, "b": 0.0}, events=events, duration=1.0)
    assert receipts_over_time(observation=obs) == [
        (0.0, 1, 0),
        (1.0, 0, 0),
        (2.0, 1, 2),
    ]
    longer = Observation(tasks={"a": 0.0}, events=events, duration=9.0)
    assert receipts_over_time(observation=longer, bucket=2.5) == [
        (0.0, 1, 0),
        (2.5, 1, 2),
        (5.0, 0, 0),
        (7.5, 0, 0),
    ]
    assert receipts_over_time(observation=Observation({}, [], duration=5.0)) == []
    started_only = Observation({"a": 0.0}, [Event("started", "a", 1.0)], duration=3.0)
    assert receipts_over_time(observation=started_only) == []


def test_events_of_a_task_and_grouped_by_task_in_time_order():
    late, early, stray = (
        Event("received", "a", 2.0),
        Event("received", "a", 1.0),
        Event("received", "z", 0.5),
    )
    obs = Observation(tasks={"a": 0.0, "b": 0.0}, events=[late, stray, early])
    assert obs.of_task("a") == [late, early]
    assert obs.of_task("b") == []
    assert obs.by_task() == {"a": [early, late], "b": [], "z": [stray]}


def test_a_delivery_logged_before_the_firing_falls_outside_the_buckets():
    # A worker's clock a little behind the server's: t < 0 floors to bucket -1, not 0.
    events = [Event("received", "a", -0.5), Event("received", "a", 0.5, redelivered=True)]
    obs = Observation(tasks={"a": 0.0}, events=events, duration=1.0)
    assert receipts_over_time(observation=obs) == [(0.0, 0, 1), (1.0, 0, 0)]


def test_a_delivery_at_the_runs_end_is_in_the_last_bucket_not_before_an_empty_one():
    # The run's end and the events fall into buckets by the same floor division (1.0 // 0.1 is
    # 9 in floating point, as 1.0 / 0.1 is 10): no empty bucket trails the last delivery.
    obs = Observation({"a": 0.0}, [Event("received", "a", 1.0)], duration=1.0)
    buckets = receipts_over_time(observation=obs, bucket=0.1)
    assert len(buckets) == 10
    assert buckets[-1][1:] == (1, 0)


def test_a_dead_pool_child_and_the_delivery_count_are_read_from_the_stored_events():
    from teachlab.lab.experiments.observe import event_from_dict

    stored = [
        {"kind": "received", "task_id": "a", "t": 0.1, "data": {}},
        {"kind": "failed", "task_id": "a", "t": 0.5, "data": {"error": "WorkerLostError('x')"}},
        {"kind": "failed", "task_id": "a", "t": 0.6, "data": {"error": "ValueError('x')"}},
        {"kind": "received", "task_id": "a", "t": 0.7, "data": {"delivery_count": 2}},
        {"kind": "received", "task_id": "b", "t": 0.8, "data": {}},
    ]
    obs = Observation(tasks={"a": 0.0, "b": 0.0}, events=[event_from_dict(e) for e in stored])
    assert task_metric(observation=obs, what="worker_lost") == {"a": 1.0, "b": 0.0}
    assert task_metric(observation=obs, what="failures") == {"a": 2.0, "b": 0.0}
    assert task_metric(observation=obs, what="delivery_count") == {"a": 2.0, "b": 0.0}


def test_duplicates_mean_the_same_in_the_checks_as_on_the_run_page():
    """One meaning (receipts beyond the first of each task) for experiments and the live
    counters: task a twice, b once, c never."""
    events = _copy("a", 0.0, 1.0) + _copy("a", 0.5, 1.5) + _copy("b", 0.0, 2.0)
    obs = Observation(tasks={"a": 1.0, "b": 1.0, "c": 1.0}, events=events)
    page = totals({"received": 3, "first": 2}, 3)["duplicates"]
    assert run_metric(observation=obs, what="duplicates") == page == 1

"""The RabbitMQ quorum lane: the broker holds the countdown, so the worker gets it once, late."""

import pytest

from tests.lab.conftest import only_task

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def test_quorum_queue_delivers_a_10_second_countdown_once_and_not_before_it_is_due(
    lab_stack, fired_runs
):
    lab_stack.need_rabbit()
    task = only_task(fired_runs["rabbit10"])
    assert (task["received"], task["executed"]) == (1, 1), task
    # Native delayed delivery: the worker receives it only when it is due.
    # (seconds since publishing; a busy machine publishes a little after firing, so the
    # countdown sent is shorter by that lag: due_t is what the broker was asked to hold.)
    assert 8 <= task["due_t"] <= 10.05, task
    assert task["received_t"][0] >= task["due_t"] - 0.05, task
    assert task["received_t"][0] <= task["due_t"] + 3, task

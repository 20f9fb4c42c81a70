"""The cost model against real runs: for each of the lab's broker cases fired through real
workers (the session's `fired_runs`), the estimated deliveries are the receipts that came."""

from __future__ import annotations

import pytest

from teachlab.lab.runs.costs import run_cost
from teachlab.lab.runs.lanes import lane_get
from teachlab.lab.runs.params import RunParams

pytestmark = [pytest.mark.broker, pytest.mark.slow]

CASES = {
    "short25": ("redis-short", {"countdown": 25}),
    "short5": ("redis-short", {"countdown": 5}),
    "short25_guard": ("redis-short", {"countdown": 25, "guard": True}),
    "long25": ("redis-long", {"countdown": 25}),
    "short_late": ("redis-short", {"acks_late": True, "duration": 22}),
    "short_fail_guard": (
        "redis-short",
        {"countdown": 2, "guard": True, "fail": 1, "retry": True},
    ),
    "short_expires": ("redis-short", {"countdown": 6, "expires": 3}),
    "rabbit10": ("rabbit-quorum", {"countdown": 10}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_estimated_deliveries_are_the_receipts_a_real_run_got(fired_runs, case):
    if case not in fired_runs:
        pytest.skip(f"{case} was not fired (no RabbitMQ)")
    lane, params = CASES[case]
    estimate = run_cost(RunParams(**params), lane_get(lane), now=0.0)
    assert estimate.deliveries == fired_runs[case]["receipts"], fired_runs[case]

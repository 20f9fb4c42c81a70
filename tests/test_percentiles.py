"""teachlab/core/percentiles.py: the one percentile definition (nearest rank) behind every measured
figure. These pin the definition itself, so a change of formula shows up here first."""

from __future__ import annotations

import pytest

from teachlab.core.percentiles import percentile, percentiles_ms


def test_nearest_rank_takes_the_value_at_rank_ceil_q_times_n():
    values = [15, 20, 35, 40, 50]  # the textbook example, out of order below
    shuffled = [40, 15, 50, 20, 35]
    assert [percentile(shuffled, q) for q in (0.05, 0.3, 0.4, 0.5, 1.0)] == [15, 20, 20, 35, 50]
    assert percentile(values, 0) == 15  # rank 1, not rank 0
    # Never an interpolation: p50 of an even count is the lower middle value, not the mean.
    assert percentile([1, 2, 3, 4], 0.5) == 2


def test_a_q_that_floating_point_puts_just_above_a_whole_rank_is_not_pushed_up():
    hundred = list(range(1, 101))
    assert percentile(hundred, 0.07) == 7  # 0.07 * 100 is 7.000000000000001
    assert [percentile(hundred, q) for q in (0.5, 0.95, 0.99)] == [50, 95, 99]


def test_no_values_give_none_and_a_q_outside_0_to_1_is_refused():
    assert percentile([], 0.5) is None
    with pytest.raises(ValueError, match="from 0 to 1; you gave 95"):
        percentile([1, 2], 95)


def test_percentiles_ms_names_each_q_and_the_max_in_milliseconds():
    seconds = [i / 1000 for i in range(20, 0, -1)]  # 1..20 ms, out of order
    assert percentiles_ms(seconds) == {"p50": 10.0, "p99": 20.0, "max": 20.0}
    assert percentiles_ms(seconds, qs=(0.5, 0.95), ndigits=1) == {
        "p50": 10.0,
        "p95": 19.0,
        "max": 20.0,
    }
    assert percentiles_ms([], qs=(0.95,)) == {"p95": None, "max": None}

"""scripts/redis_rtt.py: the round-trip floor quoted beside the handler overhead figures."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from django.conf import settings

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "redis_rtt.py"


def _script():
    spec = importlib.util.spec_from_file_location("redis_rtt", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_percentiles_are_taken_from_the_sorted_times_in_milliseconds():
    rtt = _script()
    times = [i / 1000 for i in range(100, 0, -1)]  # 1..100 ms, out of order
    assert rtt.percentiles_ms(times) == {"p50": 50.0, "p99": 99.0, "max": 100.0}


def test_a_real_redis_answers_every_ping_and_each_round_trip_is_timed():
    rtt = _script()
    times = rtt.rtt_sample(url=settings.REDIS_URL, seconds=0.3, every=0.01)
    assert 5 <= len(times) <= 31
    assert all(0 < t < 0.3 for t in times)

"""The one percentile definition every measured figure uses: the benchmark scripts, the soak,
the Redis round-trip probe and the workers' handler times. Figures that are set side by side
must be computed the same way, so nothing else in the project takes a percentile.

The definition is **nearest rank**: the q-th percentile of n values is the value at rank
ceil(q * n) of the values in ascending order (rank 1 when q is 0), so it is always a value
that was observed, never an interpolation. p50 of 1..100 is 50, p95 is 95, p100 is the max.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def percentile(values: Iterable[float], q: float) -> float | None:
    """The nearest-rank q-th percentile (q from 0 to 1) of `values`; None when there are none."""
    if not 0 <= q <= 1:
        raise ValueError(f"a percentile's q runs from 0 to 1; you gave {q}")
    ordered = sorted(values)
    if not ordered:
        return None
    # round() first: 0.07 * 100 is 7.000000000000001 in floating point, rank 7 not 8.
    rank = max(1, math.ceil(round(q * len(ordered), 9)))
    return ordered[rank - 1]


def percentiles_ms(
    seconds: Iterable[float], *, qs: tuple[float, ...] = (0.5, 0.99), ndigits: int = 3
) -> dict[str, float | None]:
    """Durations in seconds as {"p50": ms, "p99": ms, "max": ms} (one key per q, then the max),
    rounded to `ndigits`; each value is None when there are no durations."""
    ordered = sorted(seconds)
    found: dict[str, float | None] = {}
    for q in (*qs, 1.0):
        value = percentile(ordered, q)
        key = "max" if q == 1.0 else f"p{round(q * 100):g}"
        found[key] = None if value is None else round(value * 1000, ndigits)
    return found

"""What the fuzz targets generate: junk text, form fields, path segments, JSON values.

TEACHLAB_FUZZ_EXAMPLES is the number of generated inputs per target: 100 unless set;
scripts/test (and so CI) sets 2,000, the issue's count, in its background fuzz processes (HTTP
targets on SQLite, frames on PostgreSQL), and 100 for the HTTP targets once more on PostgreSQL. Each Hypothesis example sends BATCH of them: Hypothesis's fixed cost per example was
more than its cost per draw, so ten inputs to an example make each input cheaper, and shrinking
still narrows a failure down to the one input that broke. Each target's world counts the inputs
it sent and its teardown fails if that is fewer than asked for (tests/fuzz/conftest.py prints
the counts at the end of the run). Deadlines and Hypothesis's example database are off: timing
on a shared 2-core machine is noise, and CI starts from a fresh checkout anyway."""

from __future__ import annotations

import json
import math
import os
import string
from urllib.parse import quote

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("TEACHLAB_FUZZ_EXAMPLES") or 100)  # inputs per target
BATCH = min(10, EXAMPLES)  # inputs per Hypothesis example
FUZZ = settings(
    max_examples=math.ceil(EXAMPLES / BATCH),
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)

# Text that forms meet in the wild: empty, huge, control characters, lookalike numbers.
# Characters that break things more often than a random code point: controls, NUL, combining
# marks, zero-width and direction marks, lookalike digits and letters, an emoji.
AWKWARD = (
    string.printable + "\x00\x01\x7f\u00e9\u0301\u200b\u202e\ufeff\U0001f642\u00b2\u0663\uff21"
)
junk = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=AWKWARD, max_size=40),
    st.sampled_from(
        ["", " ", "0", "-1", "1e309", "nan", "inf", "NaN", "9" * 40, "\x00", "🙂", "²", "on"]
    ),
    st.sampled_from(["holds", "costs", "yes", "true", "1", "basics", "prompt", "receipts"]),
    st.integers(min_value=-(10**12), max_value=10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    # Long values without generating each character: a short piece repeated.
    st.tuples(st.text(min_size=1, max_size=3), st.integers(60, 200)).map(lambda p: p[0] * p[1]),
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)


def fields(names: list[str], good: dict | None = None):
    """A form's fields: each absent, junk, or (when given) one of its good values, plus now and
    then a field the form does not know."""
    good = good or {}
    per_field = {
        name: junk | st.sampled_from(good[name]) if good.get(name) else junk for name in names
    }
    known = st.fixed_dictionaries({}, optional=per_field)
    extra = st.dictionaries(st.text(min_size=1, max_size=12), junk, max_size=2)
    return st.builds(lambda a, b: {**b, **a}, known, extra)


def segment(*good: str):
    """A path segment: a good value, or junk percent-encoded the way a browser would send it."""
    bad = st.text(min_size=1, max_size=80).map(lambda t: quote(t, safe=""))
    bad |= st.sampled_from(["0", "-1", "99999999999999999999", "%00", "..", "a" * 300])
    return st.sampled_from(good) | bad if good else bad


def query(names: list[str], good: dict | None = None):
    """A query string (without '?') made from fields()."""

    def encode(data: dict) -> str:
        return "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in data.items())

    return fields(names, good).map(encode)


def frame_text(shape):
    """A socket frame from a dict-shaped strategy: the dict as JSON (mostly), or mangled."""
    return st.one_of(
        shape.map(json.dumps),
        shape.map(json.dumps),
        shape.map(json.dumps),
        shape.map(lambda d: json.dumps(d)[: max(1, len(json.dumps(d)) // 2)]),
        json_values.map(json.dumps),
        st.text(min_size=1, max_size=200),
        st.just("[" * 3000),
        st.integers(4097, 6000).map(lambda n: "a" * n),
    )

"""teachlab/lab/live/run_html.py builds the run page's live pieces as strings: each must be the
same HTML, byte for byte, as the templates/lab/run.html partial the full page renders, for
any event the log can hold (odd task ids and worker names, missing times, no timeout)."""

from __future__ import annotations

from typing import Any

import pytest
from django.template.defaultfilters import floatformat, truncatechars
from django.template.loader import render_to_string
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from teachlab.lab.live import run_html
from teachlab.lab.live.fragments import (
    TEMPLATE,
    Copy,
    Picture,
    render_batch_html,
    render_redraw_html,
)
from teachlab.lab.models import RunEvent

KINDS = [k.value for k in RunEvent.Kind]
TASKS = ["3f2c9a10-aaaa-4bbb-8ccc-123456789abc", "t<1>&\"'", "short", "x" * 40, "", "tâche-é" * 3]
WORKERS = ["redis-short-1@lab-host", "redis-long-2@h", "<w>&'\"@x", "", "plain"]
TIMES = st.one_of(
    st.none(),
    st.floats(min_value=-5, max_value=5000, allow_nan=False),
    st.sampled_from([0.0, 0.005, 0.125, 2.675, 10.0, 1e-9, -0.004]),
)
COUNTS = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "tasks": st.integers(0, 5000),
            "receipts": st.integers(0, 50000),
            "executions": st.integers(0, 5000),
            "duplicates": st.integers(0, 50000),
            "suppressed": st.integers(0, 5000),
            "amplification": st.floats(0, 50, allow_nan=False),
        }
    ),
)


@st.composite
def events(draw) -> dict[str, Any]:
    """An event dict as teachlab.lab.eventlog.stream.entry_event gives it, and some it never gives."""
    started = draw(st.sampled_from([1000.0, 1733300000.25]))
    at = draw(TIMES)
    return {
        "seq": draw(st.one_of(st.none(), st.integers(1, 10**6))),
        "kind": draw(st.sampled_from(KINDS)),
        "task_id": draw(st.sampled_from(TASKS)),
        "index": draw(st.one_of(st.none(), st.integers(0, 2000))),
        "copy": draw(st.integers(1, 6)),
        "worker": draw(st.sampled_from(WORKERS)),
        "redelivered": draw(st.booleans()),
        "at": None if at is None else started + at,
        "t": at,  # the worker sends both (labevent.event_new)
        "since_publish": at,
        "run_started_at": draw(st.sampled_from([started, None])),
        "published_at": started,
        "eta": draw(st.one_of(st.none(), st.just(started + 30.0), TIMES)),
        "visibility_timeout": draw(st.sampled_from([None, 0, 0.0, 10.0, 7.5, 3600])),
        "counts": draw(COUNTS),
        "prediction": draw(st.one_of(st.none(), st.integers(0, 3))),
    }


def _picture(history: list[dict[str, Any]]) -> Picture:
    picture = Picture()
    for event in history:
        picture.add(event)
    return picture


def _copies(history: list[dict[str, Any]]) -> list[Copy]:
    """Every copy a picture of these events holds, outcomes and start times set."""
    return [c for line in _picture(history).tasks.values() for c in line.copies]


RUN = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@RUN
@given(st.lists(events(), min_size=1, max_size=12))
def test_a_receipt_row_and_its_cells_are_the_partials_html(history):
    for c in _copies(history):
        page = {"c": c}
        assert run_html.receipt_row(c) == render_to_string(f"{TEMPLATE}#receipt_row", page)
        assert run_html.tl_copy(c) == render_to_string(f"{TEMPLATE}#tl_copy", page)
        assert run_html.tl_hold(c) == render_to_string(f"{TEMPLATE}#tl_hold", page)
        assert run_html.tl_hold(c, oob=True) == render_to_string(
            f"{TEMPLATE}#tl_hold", {**page, "hold_oob": True}
        )
        for at in (None, c.at, 1733300012.123456):
            assert run_html.outcome_cell(c, oob=True, at=at) == render_to_string(
                f"{TEMPLATE}#outcome", {**page, "cell_oob": True, "cell_at": at}
            )


@RUN
@given(st.lists(events(), min_size=1, max_size=12))
def test_a_timeline_row_and_a_countdown_bar_are_the_partials_html(history):
    for line in _picture(history).tasks.values():
        page = {"line": line}
        assert run_html.tl_row(line) == render_to_string(f"{TEMPLATE}#tl_row", page)
        assert run_html.wait_bar(line) == render_to_string(f"{TEMPLATE}#wait_bar", page)


@RUN
@given(COUNTS, st.one_of(st.none(), st.integers(0, 3)), st.booleans())
def test_the_counters_and_the_prediction_are_the_partials_html(counts, prediction, final):
    counts = counts or {}
    page = {"oob": True, "counts": counts, "prediction": prediction, "final": final}
    assert run_html.counters(counts, final=final) == render_to_string(f"{TEMPLATE}#counters", page)
    assert run_html.prediction_line(prediction, counts, final=final) == render_to_string(
        f"{TEMPLATE}#prediction", page
    )


@RUN
@given(st.lists(events(), max_size=12))
def test_the_copies_table_is_the_partials_html(history):
    receipts = _picture(history).receipts
    assert run_html.receipts_table(receipts) == render_to_string(
        f"{TEMPLATE}#receipts", {"oob": True, "picture": {"receipts": receipts}}
    )


def test_a_batch_frame_holds_each_change_once_in_its_container():
    """A copy received and run in the same batch is one row with its outcome; an outcome
    for a copy of an earlier batch swaps its cell and bar; a finished task drops its bar."""
    base = {"run_started_at": 1000.0, "published_at": 1000.0, "visibility_timeout": 10.0,
            "prediction": 2}  # fmt: skip
    earlier = {**base, "seq": 1, "kind": "received", "task_id": "a", "index": 0, "copy": 1,
               "worker": "w1@h", "at": 1000.5, "eta": 1030.0}  # fmt: skip
    counts = {"tasks": 2, "receipts": 3, "executions": 1}
    batch = [
        {**base, "seq": 2, "kind": "received", "task_id": "b", "index": 1, "copy": 1,
         "worker": "w2@h", "at": 1001.0, "eta": 1031.0},
        {**base, "seq": 3, "kind": "received", "task_id": "a", "index": 0, "copy": 2,
         "worker": "w2@h", "redelivered": True, "at": 1010.6, "eta": 1030.0},
        {**base, "seq": 4, "kind": "started", "task_id": "a", "index": 0, "copy": 1,
         "worker": "w1@h", "at": 1030.0, "eta": 1030.0},
        {**base, "seq": 5, "kind": "finished", "task_id": "a", "index": 0, "copy": 1,
         "worker": "w1@h", "at": 1030.2, "eta": 1030.0, "counts": counts},
    ]  # fmt: skip
    for event in (earlier, *batch):  # the times the worker sends with each event
        event["t"] = event["since_publish"] = round(event["at"] - 1000.0, 4)
    frame = render_batch_html(batch, last="5-0", picture=_picture([earlier, *batch]))
    assert frame.count('<tr id="rc-b-1"') == 1 and frame.count('<tr id="rc-a-2"') == 1
    assert frame.count('id="out-a-1" hx-swap-oob="true" data-at="1030.2000"') == 1
    assert "executed at 30.00 s" in frame  # its body started at 30.00 s, in this batch
    assert frame.count('id="hold-a-1" hx-swap-oob="true"') == 1
    assert '<div hx-swap-oob="beforeend:#tl-a">' in frame  # copy 2 on task a's track
    assert frame.count('<div class="tl-row"') == 1  # only b's row is new
    assert '<li id="wait-b" class="wait"' in frame
    assert '<li id="wait-a" class="wait done" hidden hx-swap-oob="true">' in frame
    assert 'data-counter="receipts">3<' in frame and "So far: <strong>3</strong>" in frame
    assert frame.endswith('<template id="live-cursor" data-last="5-0"></template>')


@RUN
@given(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.floats(min_value=-1e6, max_value=1e6),
        st.decimals(min_value=-1000, max_value=1000, places=4).map(float),
        st.integers(-10, 10),
        st.none(),
        st.text(max_size=4),
    ),
    st.sampled_from([1, 2]),
)
def test_numbers_are_rounded_as_floatformat_rounds_them(value, places):
    assert run_html._f(value, places) == floatformat(value, places)


@RUN
@given(
    st.text(max_size=20) | st.from_regex(r"[0-9a-f-]{0,40}", fullmatch=True),
    st.sampled_from([9, 13]),
)
def test_task_ids_are_cut_as_truncatechars_cuts_them(text, length):
    assert run_html._cut(text, length) == truncatechars(text, length)


@pytest.mark.parametrize("outcome", ["", "executed", "running", "bogus<kind>"])
def test_an_outcome_cell_says_what_became_of_the_copy(outcome):
    c = Copy(task_id="t", dom="t", copy=1, t=1.0, vt=10.0, outcome=outcome, ran=2.5)
    cell = run_html.outcome_cell(c)
    expected = {
        "": "waiting",
        "executed": "executed at 2.50 s",
        "running": "running since 2.50 s",
        "bogus<kind>": "bogus&lt;kind&gt;",
    }[outcome]
    assert f">{expected}</td>" in cell


def test_an_empty_batch_draws_only_its_cursor():
    assert render_batch_html([], last="9-0") == (
        '<template id="live-cursor" data-last="9-0"></template>'
    )


@pytest.mark.parametrize(
    ("done", "expected"),
    [(None, "Live: connected."), ({"status": "done", "tasks": 1}, "Run finished: every copy")],
)
def test_a_redraw_carries_one_status_and_a_finished_runs_says_it_finished(done, expected):
    """A page that joins after the end reads the run's last word, not 'connected' then it."""
    html = render_redraw_html(Picture(), counts=None, prediction=None, done=done, last="1-0")
    assert html.count('id="live-status"') == 1
    assert expected in html.split('id="live-status"', 1)[1]

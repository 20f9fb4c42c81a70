"""The run page's live pieces built as plain strings: the same HTML as the partials of
templates/lab/run.html, for the path that draws them many times a second.

A reader draws each batch of a restore sweep's burst while every socket of its process
waits. Through the template engine a 50-event batch took about 10 ms on an idle core and
25-60 ms while workers, recorder and browser shared the machine's two
(docs/measurements/history/lab.md);
string building draws the same HTML several times faster. The full page still renders the
partials. tests/lab/test_run_html.py holds each function here equal to its partial, byte
for byte, over generated events, so a change to one that is not made to the other fails.

Numbers are rounded as Django's floatformat rounds them (the decimal written by repr, half
up, no "-0.00"), task ids cut as truncatechars cuts them; anything out of the ordinary (not a
float, not ASCII) goes through Django's own filter. Text goes through html.escape, as
autoescape does.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from html import escape
from typing import Any

from django.template.defaultfilters import floatformat, pluralize, truncatechars


def _e(value: Any) -> str:
    return escape(str(value))


def _fmt(value: Any, spec: str) -> str:
    """The `stringformat` filter: "" for a value the format refuses (None, a string)."""
    try:
        return ("%" + spec) % value
    except (TypeError, ValueError):
        return ""


_PLACES = {1: Decimal("0.1"), 2: Decimal("0.01")}


def _f(value: Any, places: int) -> str:
    """`floatformat:places` (1 or 2) at a fraction of its cost (about 6 us a call, twice a row)."""
    if type(value) is float and (1e-6 < abs(value) < 1e15 or value == 0):
        d = Decimal(repr(value)).quantize(_PLACES[places], ROUND_HALF_UP)
        return f"{d if d else abs(d):f}"
    return floatformat(value, places)


def _cut(text: str, length: int) -> str:
    """`truncatechars:length`: an ASCII id longer than `length` keeps length-1 characters
    and an ellipsis."""
    if not text.isascii():
        return truncatechars(text, length)
    return text if len(text) <= length else text[: length - 1] + "…"


OOB = ' hx-swap-oob="true"'
FINAL = ' data-seq="final"'
AGAIN_MARK = '<span class="again-mark" aria-hidden="true"> ↻</span>'
OUTCOME_TEXT = {
    "suppressed": "turned away by the guard",
    "failed": "failed",
    "revoked": "revoked, never ran",
    "requeued": "handed back, never ran here",
}


def outcome_cell(c, *, oob: bool = False, at: float | None = None) -> str:
    """#outcome: the copy's last cell; out of band (with the time it changed) in a batch."""
    outcome = c.outcome or "waiting"
    attrs = f' hx-swap-oob="true" data-at="{_fmt(at, ".4f")}"' if oob else ""
    if c.outcome == "executed":
        when = c.ran if c.ran is not None else c.end if c.end is not None else c.t
        text = f"executed at {_f(when, 2)} s"
    elif c.outcome == "running":
        text = f"running since {_f(c.ran if c.ran is not None else c.t, 2)} s"
    else:
        text = OUTCOME_TEXT.get(c.outcome) or _e(outcome)
    return f'<td id="out-{_e(c.dom)}-{_e(c.copy)}"{attrs} class="outcome {_e(outcome)}">{text}</td>'


def _marks(marks) -> str:
    """A copy's fields the run page writes as data attributes (labevent.Field.page)."""
    return "".join(f' data-{_e(name)}="{_e(value)}"' for name, value in marks)


def receipt_row(c) -> str:
    """#receipt_row: one delivery in the copies table."""
    again = c.redelivered
    if c.index is not None:
        task = _e(c.index)
    else:
        task = f"<code>{_e(_cut(c.task_id, 9))}</code>"
    if c.t is not None:
        received = f"{_f(c.t, 2)} s"
    elif c.since is not None:
        received = f"{_f(c.since, 2)} s"
    else:
        received = ""
    return (
        f'<tr id="rc-{_e(c.dom)}-{_e(c.copy)}" data-seq="{_e(c.seq)}"'
        f' data-at="{_fmt(c.at, ".4f")}"{_marks(c.marks)} class="{"redelivered" if again else ""}">\n'
        f'  <td title="{_e(c.task_id)}">{task}</td>\n'
        f"  <td>{_e(c.copy)}{AGAIN_MARK if again else ''}</td>\n"
        f"  <td>{received}</td>\n"
        f'  <td title="{_e(c.worker)}">{_e(c.worker_short)}</td>\n'
        f"  <td>{'<strong>yes</strong>' if again else 'no'}</td>\n"
        f"  {outcome_cell(c)}\n"
        "</tr>"
    )


def tl_hold(c, *, oob: bool = False) -> str:
    """#tl_hold: the bar from a copy's receipt to its end (open while it is held)."""
    end = c.end
    swap = OOB if oob else ""
    if end is None:
        return f'<span id="hold-{_e(c.dom)}-{_e(c.copy)}"{swap} class="tl-hold {_e(c.outcome or "waiting")} open"></span>'
    return (
        f'<span id="hold-{_e(c.dom)}-{_e(c.copy)}"{swap} class="tl-hold {_e(c.outcome or "waiting")}"'
        f' data-css="--end: {_fmt(end, ".3f")}"></span>'
    )


def tl_copy(c) -> str:
    """#tl_copy: one copy on its task's track, with its visibility window behind it."""
    vt = c.vt
    css = f"--lane: {_e(c.lane)}; --start: {_fmt(c.t or 0, '.3f')}"
    if vt:
        css += f"; --vt: {_fmt(vt, '.3f')}"
    window = '<span class="tl-window"></span>' if vt else ""
    return (
        f'<span class="tl-copy{" redelivered" if c.redelivered else ""}" data-css="{css}">'
        f"{window}{tl_hold(c)}</span>"
    )


def tl_row(line) -> str:
    """#tl_row: one task's row in the timeline, its ETA marked, its copies on it."""
    order = _e(line.order)
    eta_t = line.eta_t
    due = f" <i>due {_f(eta_t, 1)} s</i>" if eta_t is not None else ""
    mark = (
        f'<span class="tl-eta" data-css="--at: {_fmt(eta_t, ".3f")}"></span>'
        if eta_t is not None
        else ""
    )
    copies = "".join(tl_copy(c) for c in line.copies)
    return (
        f'<div class="tl-row" data-css="--i: {order}"><span class="tl-label">task {order}{due}'
        f'</span><div class="tl-track" id="tl-{_e(line.dom)}" title="{_e(line.task_id)}">'
        f"{mark}{copies}</div></div>"
    )


def wait_bar(line) -> str:
    """#wait_bar: a countdown bar for a task not yet due."""
    short = _e(_cut(line.task_id, 13))
    return (
        f'<li id="wait-{_e(line.dom)}" class="wait" data-eta="{_fmt(line.eta, ".3f")}">'
        f'<code>{short}</code> <progress max="1" value="0" aria-label="Countdown of task {short}">'
        '</progress> <span class="left"></span></li>'
    )


def _count(counts: dict, key: str) -> str:
    return _e(counts.get(key) or 0)


def counters(counts: dict, *, final: bool = False) -> str:
    """#counters, out of band: the run's counters (amplification only once it is over)."""
    if final:
        amplification = f"{_f(counts.get('amplification') or 0, 2)}×"
    else:
        amplification = '<span class="pending">after the run</span>'
    return (
        f'\n<dl id="counters" hx-swap-oob="true"{FINAL if final else ""} class="counters">\n'
        f"  <div><dt>Tasks sent</dt><dd>{_count(counts, 'tasks')}</dd></div>\n"
        f'  <div><dt>Receipts</dt><dd data-counter="receipts">{_count(counts, "receipts")}</dd></div>\n'
        "  <div><dt>Executions</dt>"
        f'<dd data-counter="executions">{_count(counts, "executions")}</dd></div>\n'
        f"  <div><dt>Duplicates</dt><dd>{_count(counts, 'duplicates')}</dd></div>\n"
        f"  <div><dt>Suppressed</dt><dd>{_count(counts, 'suppressed')}</dd></div>\n"
        f'  <div><dt>Amplification</dt><dd data-counter="amplification">{amplification}</dd></div>\n'
        "</dl>\n"
    )


def prediction_line(prediction: Any, counts: dict, *, final: bool = False) -> str:
    """#prediction, out of band: the learner's guess against the receipts so far."""
    if prediction is None:
        text = "You made no prediction for this run."
    elif final:
        receipts = _e(counts["receipts"]) if "receipts" in counts else ""
        text = (
            f"You predicted <strong>{_e(prediction)}</strong> receipt{pluralize(prediction)};"
            f" the broker delivered <strong>{receipts}</strong>."
        )
    else:
        text = (
            f"You predicted <strong>{_e(prediction)}</strong> receipt{pluralize(prediction)}."
            f" So far: <strong>{_count(counts, 'receipts')}</strong>."
        )
    seq = FINAL if final else ""
    return f'\n<p id="prediction" class="prediction" hx-swap-oob="true"{seq}>{text}</p>\n'


def batch_oob(batch, *, outcomes, counts: dict | None, prediction: Any) -> str:
    """A batch's out-of-band swaps: each kind of change in one container where it can be."""
    parts: list[str] = []
    if batch.rows:
        parts.append('<template><tbody hx-swap-oob="beforeend:#receipts-body">')
        parts.extend(receipt_row(c) for c in batch.rows)
        parts.append("</tbody></template>")
    if batch.lines:
        parts.append('<div hx-swap-oob="beforeend:#timeline-rows">')
        parts.extend(tl_row(line) for line in batch.lines)
        parts.append('</div><ul hx-swap-oob="beforeend:#waiting">')
        finished = batch.finished
        parts.extend(
            wait_bar(line)
            for line in batch.lines
            if line.eta is not None and line.dom not in finished
        )
        parts.append("</ul>")
    for c in batch.copies:
        parts.append(f'<div hx-swap-oob="beforeend:#tl-{_e(c.dom)}">{tl_copy(c)}</div>')
    for c, at in outcomes:
        parts.append(
            f"<template>{outcome_cell(c, oob=True, at=at)}</template>{tl_hold(c, oob=True)}"
        )
    for dom in batch.finished:
        parts.append(f'<li id="wait-{_e(dom)}" class="wait done" hidden hx-swap-oob="true"></li>')
    if counts:
        parts.append(counters(counts))
        if prediction is not None:
            parts.append(prediction_line(prediction, counts))
    return "".join(parts)


RECEIPTS_HEAD = (
    '\n<div id="receipts" hx-swap-oob="true" class="table-wrap copies-wrap" tabindex="0"'
    ' role="region" aria-labelledby="h-receipts">\n<table class="receipts">\n  <thead><tr>'
    '<th scope="col">Task</th><th scope="col">Copy</th><th scope="col">Received</th>'
    '<th scope="col">Worker</th><th scope="col"><span class="th-long">Redelivered</span>'
    '<span class="th-short" aria-hidden="true">Again</span></th><th scope="col">Ran</th>'
    '</tr></thead>\n  <tbody id="receipts-body">'
)
RECEIPTS_TAIL = "</tbody>\n</table>\n</div>\n"


def receipts_table(receipts) -> str:
    """#receipts, out of band: the whole copies table."""
    return RECEIPTS_HEAD + "".join(receipt_row(c) for c in receipts) + RECEIPTS_TAIL


def backlog(picture, *, counts: dict, prediction: Any, final: bool) -> str:
    """A redraw's out-of-band swaps: every panel the events change, drawn from a picture."""
    parts = [counters(counts, final=final)]
    if prediction is not None:
        parts.append(prediction_line(prediction, counts, final=final))
    parts.append('<div id="timeline-rows" hx-swap-oob="true">')
    parts.extend(tl_row(line) for line in picture.lines)
    parts.append('</div><ul id="waiting" class="waiting" hx-swap-oob="true">')
    parts.extend(wait_bar(line) for line in picture.waiting)
    parts.append("</ul>")
    parts.append(receipts_table(picture.receipts))
    return "".join(parts)

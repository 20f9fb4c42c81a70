"""The learner's past runs with their parameters and results (reads only)."""

from __future__ import annotations

from typing import Any

from teachlab.lab.runs.reading import run_summary, runs_for_learner

HISTORY_LIMIT = 100

LABELS = {
    "count": "tasks",
    "countdown": "countdown {} s",
    "eta": "ETA {}",
    "spacing": "spacing {} s",
    "expires": "expires {} s",
    "duration": "body {} s",
}


def params_text(params: dict[str, Any]) -> str:
    """One readable line: "3 tasks, countdown 45 s, spacing 1 s, acks_late, guard"."""
    parts = []
    count = params.get("count", 1)
    parts.append(f"{count} task{'s' if count != 1 else ''}")
    for key in ("countdown", "eta", "spacing", "expires", "duration"):
        value = params.get(key)
        if value not in (None, 0, 0.0, ""):
            parts.append(LABELS[key].format(_num(value)))
    for flag in ("acks_late", "guard", "retry"):
        if params.get(flag):
            parts.append(flag.replace("_", " ") if flag != "acks_late" else "acks_late")
    if params.get("fail"):
        parts.append(f"fails {params['fail']}×")
    return ", ".join(parts)


def _num(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def run_span(run) -> int:
    """Seconds the timeline should show at first: the last ETA plus the body and a margin.
    lab.js widens it if the run outlasts the guess (a crash strands a copy, say)."""
    params = run.params or {}
    countdown = float(params.get("countdown") or 0)
    eta = params.get("eta")
    if eta not in (None, "") and run.fired_at:
        try:
            countdown = max(countdown, float(eta) - run.fired_at)
        except (TypeError, ValueError):
            pass
    last = countdown + float(params.get("spacing") or 0) * max(int(params.get("count") or 1) - 1, 0)
    span = last + float(params.get("duration") or 0) + 5
    if run.settled_at and run.fired_at:
        span = max(span, run.settled_at - run.fired_at + 1)
    return max(10, int(span + 0.999))


def history_rows(*, learner) -> list[dict[str, Any]]:
    rows = []
    for run in runs_for_learner(learner)[:HISTORY_LIMIT]:
        rows.append({"run": run, "params": params_text(run.params), "summary": run_summary(run)})
    return rows

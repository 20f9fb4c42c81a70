"""What the workshop reads from the lessons and the lab, through their published APIs only."""

from __future__ import annotations

from dataclasses import dataclass

from lessons import catalog
from lessons.rendering import render_markdown

TIER_LABELS = {
    "prompt": "The question",
    "basics": "Basics",
    "solid": "Solid",
    "senior": "Senior",
}
# run_summary keys a room can predict: "how many ... will the room see?"
METRICS = {
    "receipts": "receipts (deliveries)",
    "executions": "executions (bodies that ran)",
    "duplicates": "duplicate deliveries",
    "suppressed": "copies the guard suppressed",
    "max_receipts": "receipts of the most-delivered task",
}


def observed_value(summary: dict, metric: str) -> int:
    """The number a room predicted, as the lab's run summary states it (reading.state_summary:
    the run's RunState, the same numbers the experiment checks read)."""
    return int(round(float(summary.get(metric) or 0)))


def questions():
    return catalog.all_questions()


def question(slug: str):
    return catalog.get_question(slug) if slug else None


def claim(key: str):
    return catalog.get_claim(key) if key else None


def markdown(text: str) -> str:
    return render_markdown(text or "")


@dataclass(frozen=True)
class ExperimentChoice:
    """A lab experiment a room can predict together: one run and a number to guess."""

    slug: str
    title: str
    prompt: str
    metric: str
    lane: str
    params: dict


def room_experiments() -> list[ExperimentChoice]:
    """Experiments whose prediction is a number the room's run summary reports."""
    try:
        from teachlab.lab.experiments.catalog import experiments_load

        loaded = experiments_load()
    except Exception:  # noqa: BLE001 - the lab may be unconfigured; the room still works
        return []
    choices = []
    for exp in loaded:
        prediction = exp.prediction or {}
        observe = prediction.get("observe") or {}
        metric = observe.get("what") if isinstance(observe, dict) else None
        if prediction.get("kind") != "number" or metric not in METRICS or not exp.runs:
            continue
        run = exp.run_named(observe["run"]) if observe.get("run") else exp.runs[0]
        choices.append(
            ExperimentChoice(
                slug=exp.slug,
                title=exp.title,
                prompt=str(prediction.get("prompt", ""))[:300],
                metric=metric,
                lane=run["lane"],
                params=dict(run.get("params") or {}),
            )
        )
    return choices


def lanes() -> list[tuple[str, str]]:
    try:
        from teachlab.lab.runs.lanes import lanes as lab_lanes

        return [(lane.name, lane.title or lane.name) for lane in lab_lanes(listed_only=True)]
    except Exception:  # noqa: BLE001
        return [("redis-short", "redis-short")]

"""Pictures of a run with many tasks: how many tasks ran once, twice, three times …, the
amplification, and receipts over time. Drawn as plain HTML/SVG by
templates/lab/experiment_charts.html#charts, which any lab page can include:

    {% include "lab/experiment_charts.html#charts" with charts=charts %}

with `charts = charts_for_run(run=run)` in the view (None for runs with few tasks).
"""

from __future__ import annotations

from teachlab.lab.experiments.checks import (
    Observation,
    copies_histogram,
    receipts_over_time,
    run_metric,
)

MANY_TASKS = 5
PLOT_W, PLOT_H = 600, 160


HISTOGRAM_CAPTIONS = {
    "executions": "Tasks by how many times their body ran",
    "receipts": "Tasks by how many copies workers received",
}


def charts_for_observation(
    *, observation: Observation, force: bool = False, histogram_of: str = "executions"
) -> dict | None:
    if len(observation.tasks) < MANY_TASKS and not force:
        return None
    histogram = copies_histogram(observation=observation, what=histogram_of)
    top = max((n for _copies, n in histogram), default=1) or 1
    bars = [
        {"copies": copies, "tasks": n, "pct": round(100 * n / top, 1)} for copies, n in histogram
    ]
    bucket = max(1.0, round(observation.duration / 40))
    series = receipts_over_time(observation=observation, bucket=bucket)
    peak = max((first + again for _t, first, again in series), default=1) or 1
    width = PLOT_W / max(1, len(series))
    columns = []
    for i, (t, first, again) in enumerate(series):
        h_first = PLOT_H * first / peak
        h_again = PLOT_H * again / peak
        columns.append(
            {
                "t": t,
                "first": first,
                "again": again,
                "x": round(i * width, 2),
                "w": round(max(1.0, width - 1), 2),
                "y_first": round(PLOT_H - h_first, 2),
                "h_first": round(h_first, 2),
                "y_again": round(PLOT_H - h_first - h_again, 2),
                "h_again": round(h_again, 2),
            }
        )
    return {
        "tasks": len(observation.tasks),
        "amplification": run_metric(observation=observation, what="amplification"),
        "receipts": run_metric(observation=observation, what="receipts"),
        "executions": run_metric(observation=observation, what="executions"),
        "bars": bars,
        "histogram_caption": HISTOGRAM_CAPTIONS[histogram_of],
        "histogram_of": histogram_of,
        "columns": columns,
        "bucket": bucket,
        "peak": peak,
        "span": round(len(series) * bucket),
        "plot_w": PLOT_W,
        "plot_h": PLOT_H,
    }


def charts_for_run(*, run, force: bool = False) -> dict | None:
    """Charts for a stored lab run (None when it has fewer than five tasks, unless forced)."""
    from teachlab.lab.experiments.observe import observation_for_run

    if len(run.task_ids) < MANY_TASKS and not force:
        return None
    return charts_for_observation(observation=observation_for_run(run=run), force=force)

"""Pictures of a run with many tasks: how many tasks ran once, twice, three times …, the
amplification, and receipts over time. Drawn as plain HTML/SVG by
templates/lab/experiment_charts.html#charts, which any lab page can include:

    {% include "lab/experiment_charts.html#charts" with charts=charts %}

with `charts = charts_for_run(run=run)` in the view (None for runs with few tasks).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from teachlab.lab.experiments.metrics import RECEIVED, Observation, run_metric, task_metric

MANY_TASKS = 5
PLOT_W, PLOT_H = 600, 160


def copies_histogram(
    *, observation: Observation, what: str = "executions"
) -> list[tuple[int, int]]:
    """How many tasks had 0, 1, 2, … copies (received or executed), ascending by copies."""
    counts = Counter(int(v or 0) for v in task_metric(observation=observation, what=what).values())
    return sorted(counts.items())


def receipts_over_time(
    *, observation: Observation, bucket: float = 1.0
) -> list[tuple[float, int, int]]:
    """(bucket start, first deliveries, redeliveries) per time bucket, for the receipts plot."""
    buckets: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for event in observation.events:
        if event.kind == RECEIVED:
            buckets[int(event.t // bucket)][1 if event.redelivered else 0] += 1
    if not buckets:
        return []
    last = max(max(buckets), int(observation.duration // bucket))
    return [(i * bucket, buckets[i][0], buckets[i][1]) for i in range(last + 1)]


def bucket_seconds(observation: Observation) -> float:
    """Width of one receipts-plot bar: about forty bars over the run, never under a second."""
    return max(1.0, round(observation.duration / 40))


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
    bucket = bucket_seconds(observation)
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

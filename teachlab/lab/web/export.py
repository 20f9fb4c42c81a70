"""A run's stored events as CSV (one row per event, every delivery its own row) and JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from teachlab.lab.runs.reading import run_events, run_summary

CSV_COLUMNS = [
    "seq",
    "kind",
    "task_id",
    "index",
    "copy",
    "worker",
    "redelivered",
    "at",
    "t",
    "since_publish",
    "eta",
    "data",
]


def events_csv(run) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for event in run_events(run):
        row = []
        for column in CSV_COLUMNS:
            value = event.get(column)
            if column == "data":
                value = json.dumps(value or {}, sort_keys=True)
            elif isinstance(value, str) and value[:1] in "=+-@":
                # A spreadsheet would run a cell starting like a formula; quote it.
                value = "'" + value
            row.append("" if value is None else value)
        writer.writerow(row)
    return out.getvalue()


def run_document(run) -> dict[str, Any]:
    """Parameters, the summary and every event: enough to redraw the run elsewhere."""
    return {
        "run": run.id,
        "lane": run.lane,
        "params": run.params,
        "prediction": run.prediction,
        "status": run.status,
        "visibility_timeout": run.visibility_timeout,
        "versions": run.versions,
        "fired_at": run.fired_at,
        "settled_at": run.settled_at,
        "task_ids": run.task_ids,
        "summary": run_summary(run),
        "events": run_events(run),
    }

#!/usr/bin/env python
"""Turn a whole `lab matrix` run, taken one Celery series at a time, into a measurement result
(docs/measurements/results/lab-matrix-<start>.json) and print the table of outcomes for the docs.

    .venv/bin/python scripts/matrix_result.py --times var/matrix-times.txt \
        --started 2026-12-05T21:49:28Z --load 0.5 var/matrix-5.7.json var/matrix-5.5.json ...

`--times` is the file the run wrote, one "celery C redis R rc=N seconds=S" line per series
and a last "total seconds=S"; the JSON files are what each `lab matrix --json` printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teachlab.core.measurements import RESULTS_DIR  # noqa: E402

GOAL = "the whole matrix unattended in under 3 hours on 2 cores, no run lost to the runner"
LINE = re.compile(r"^celery (\S+) redis (\S+) rc=(\d+) seconds=(\d+)$")


def outcome_table(records: list[dict]) -> str:
    """Markdown: one row per experiment, one column per combination, the verdict in each."""
    combos = sorted({(r["combination"]["celery"], r["combination"]["redis"]) for r in records})
    by = {
        (r["experiment"], r["combination"]["celery"], r["combination"]["redis"]): r for r in records
    }
    short = {"holds": "holds", "fails": "**fails**", "skipped": "skip", "workers fail": "w. fail",
             "not run": "**not run**"}  # fmt: skip
    head = "| experiment | " + " | ".join(f"{c}×{r}" for c, r in combos) + " |"
    rows = [head, "|---|" + "---|" * len(combos)]
    for slug in sorted({r["experiment"] for r in records}):
        cells = [short.get(by[(slug, c, r)]["verdict"], "?") if (slug, c, r) in by else "—"
                 for c, r in combos]  # fmt: skip
        rows.append(f"| `{slug}` | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--times", type=Path, required=True)
    parser.add_argument("--started", required=True, help="UTC start, 2026-12-05T21:49:28Z")
    parser.add_argument("--load", type=float, default=None, help="load average at the start")
    parser.add_argument("--commit", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR)
    parser.add_argument("records", type=Path, nargs="+")
    args = parser.parse_args(argv)
    series, total = {}, None
    for line in args.times.read_text().splitlines():
        found = LINE.match(line.strip())
        if found:
            series[f"celery {found[1]} × redis {found[2]}"] = {
                "exit": int(found[3]), "seconds": int(found[4])}  # fmt: skip
        elif line.startswith("total seconds="):
            total = int(line.split("=", 1)[1])
    records = [r for path in args.records for r in json.loads(path.read_text())]
    verdicts = Counter(r["verdict"] for r in records)
    figures = {
        "wall_s": total if total is not None else sum(s["seconds"] for s in series.values()),
        "combinations": len({(r["combination"]["celery"], r["combination"]["redis"]) for r in records}),
        "experiments": len({r["experiment"] for r in records}),
        "records": len(records),
        **{k.replace(" ", "_"): verdicts.get(k, 0)
           for k in ("holds", "fails", "skipped", "workers fail", "not run")},
        "detail": {"series": series},
    }  # fmt: skip
    result = {
        "name": "lab-matrix",
        "command": args.command,
        "commit": args.commit,
        "machine": {"cores": os.cpu_count(), "load": args.load},
        "started": args.started,
        "goal": GOAL,
        "figures": figures,
    }
    stamp = args.started.replace("-", "").replace(":", "")
    path = args.out / f"lab-matrix-{stamp}.json"
    with path.open("x") as f:
        f.write(json.dumps(result, indent=1) + "\n")
    print(f"wrote {path}")
    print(outcome_table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`manage.py lab matrix [--celery 5.5,5.7] [--redis 6.0,7.0] [--experiment SLUG ...] [--json]`.

Progress goes to stderr (stdout too without --json), the records to stdout and to
lessons/verified/. Exits 1 when a combination could not run, not when an experiment's checks
fail on it: a claim that does not hold on an old release is a finding, not a broken run.
"""

from __future__ import annotations

import json
import sys
from typing import TextIO

from teachlab.lab.matrix.envs import celery_series
from teachlab.lab.matrix.servers import REDIS_SERIES

CLI_LEARNER_KEY = "lab-matrix-cli"


def _series(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]


def parser_add(subparsers) -> None:
    sub = subparsers.add_parser(
        "matrix", help="run experiments on other Celery/kombu releases and Redis servers"
    )
    sub.add_argument(
        "--celery", type=_series, default=celery_series(), help="comma-separated, e.g. 5.5,5.7"
    )
    sub.add_argument(
        "--redis", type=_series, default=list(REDIS_SERIES), help="comma-separated, e.g. 6.0,7.0"
    )
    sub.add_argument("--experiment", nargs="+", default=[], metavar="SLUG")
    sub.add_argument("--json", action="store_true", help="print the records as JSON")


def _line(record: dict) -> str:
    versions = record["versions"]
    shown = " ".join(
        f"{k} {versions[k]}" for k in ("celery", "kombu", "redis-py", "redis") if versions.get(k)
    )
    passed = sum(1 for c in record["checks"] if c["passed"])
    checks = f"{passed}/{len(record['checks'])} checks" if record["checks"] else ""
    return (
        f"{record['verdict'].upper():<8} {record['experiment']:<28} "
        f"Celery {record['combination']['celery']} × Redis {record['combination']['redis']}  "
        f"{checks}  [{shown or 'no versions reported'}]"
        + (f"\n         {record['reason']}" if record["reason"] else "")
    )


def matrix_command(
    *,
    celery: list[str],
    redis: list[str],
    slugs: list[str],
    as_json: bool,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    from lessons.models import Learner
    from teachlab.lab.experiments.catalog import experiments_load
    from teachlab.lab.matrix.records import records_store
    from teachlab.lab.matrix.runner import Combination, matrix_run

    catalog = {e.slug: e for e in experiments_load(strict=True)}
    unknown = [s for s in slugs if s not in catalog]
    bad = [c for c in celery if c not in celery_series()] + [
        r for r in redis if r not in REDIS_SERIES
    ]
    if unknown or bad:
        err.write(
            f"Unknown: {', '.join(unknown + bad)}. Experiments: {', '.join(catalog)}; Celery: "
            f"{', '.join(celery_series())}; Redis: {', '.join(REDIS_SERIES)}.\n"
        )
        return 2
    experiments = [catalog[s] for s in slugs] if slugs else list(catalog.values())
    combinations = [Combination(c, r) for c in celery for r in redis]
    learner, _ = Learner.objects.get_or_create(key=CLI_LEARNER_KEY)

    def say(text: str) -> None:
        (err if as_json else out).write(text + "\n")
        (err if as_json else out).flush()

    def shown(record: dict) -> None:
        if not as_json:
            out.write(_line(record) + "\n")

    records = matrix_run(
        combinations=combinations,
        experiments=experiments,
        learner=learner,
        say=say,
        on_record=shown,
    )
    for slug in {r["experiment"] for r in records}:
        stored = [r for r in records if r["experiment"] == slug and r["verdict"] != "not run"]
        if stored:
            records_store(slug, stored)
    if as_json:
        out.write(json.dumps(records, indent=2, default=str) + "\n")
    return 1 if any(r["verdict"] == "not run" for r in records) else 0

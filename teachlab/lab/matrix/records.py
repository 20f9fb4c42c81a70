"""lessons/verified/<experiment>.json: what `lab matrix` saw, one record per combination.

Only the command writes these files. Each record carries the sha256 of the experiment file it
ran, so an edited experiment cannot keep an old verdict: the lesson validator refuses a record
whose digest is not the file's (`verified_problems`).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

from django.conf import settings

VERIFIED = "lessons/verified"


def verified_dir() -> Path:
    """lessons/verified/, or settings.LAB_VERIFIED_DIR (tests write their records elsewhere)."""
    return Path(settings.LAB_VERIFIED_DIR or Path(settings.BASE_DIR) / VERIFIED)


def experiment_path(slug: str) -> Path:
    return Path(settings.BASE_DIR) / "lessons" / "experiments" / f"{slug}.yaml"


def experiment_digest(slug: str) -> str:
    return hashlib.sha256(experiment_path(slug).read_bytes()).hexdigest()


def current_commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else ""


def combination_key(record: dict) -> tuple[str, str]:
    return (record["combination"]["celery"], record["combination"]["redis"])


def records_read(slug: str) -> list[dict]:
    path = verified_dir() / f"{slug}.json"
    if not path.exists():
        return []
    return list(json.loads(path.read_text()).get("records") or [])


def records_store(slug: str, new: list[dict]) -> Path:
    """Replace the records of the same combinations, keep the others that still match the
    experiment file, and drop the ones a changed file made stale."""
    digest = experiment_digest(slug)
    keys = {combination_key(r) for r in new}
    kept = [
        r for r in records_read(slug) if combination_key(r) not in keys and r["digest"] == digest
    ]
    records = sorted([*kept, *new], key=combination_key)
    path = verified_dir() / f"{slug}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"experiment": slug, "written_by": "manage.py lab matrix", "records": records}
    path.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")
    return path


def verified_problems() -> list[str]:
    """One line per stored record that no longer matches its experiment file (or names none)."""
    problems = []
    for path in sorted(verified_dir().glob("*.json")):
        slug = path.stem
        shown = f"{VERIFIED}/{path.name}"
        if not experiment_path(slug).exists():
            problems.append(f"{shown}: there is no experiment {slug}; delete this file")
            continue
        digest = experiment_digest(slug)
        try:
            records = records_read(slug)
        except (ValueError, AttributeError) as exc:
            problems.append(f"{shown}: not a records file ({exc})")
            continue
        for record in records:
            if record.get("digest") != digest:
                celery, redis = combination_key(record)
                problems.append(
                    f"{shown}: the record for Celery {celery} × Redis {redis} was made from "
                    f"another version of lessons/experiments/{slug}.yaml; re-run "
                    f"`lab matrix --experiment {slug}`"
                )
    return problems


def verified_rows(slug: str) -> list[dict]:
    """The experiment page's verified-on table: records that match the file as it is now."""
    try:
        digest = experiment_digest(slug)
        found = [r for r in records_read(slug) if r.get("digest") == digest]
    except (OSError, ValueError):
        return []
    return [
        {
            "celery": r["versions"].get("celery") or f"{r['combination']['celery']} (asked)",
            "kombu": r["versions"].get("kombu", ""),
            "redis": r["versions"].get("redis") or f"{r['combination']['redis']} (asked)",
            "verdict": r["verdict"],
            "reason": r.get("reason", ""),
            "at": r.get("at", "")[:10],
        }
        for r in found
    ]


def _spans(found: list[str], known: list[str]) -> str:
    """["5.5", "5.6", "5.7"] as "5.5–5.7" where they run on in `known`; else listed."""
    order = sorted(found, key=lambda v: known.index(v) if v in known else len(known))
    runs: list[list[str]] = []
    for value in order:
        if (
            runs
            and value in known
            and runs[-1][-1] in known
            and known.index(value) == known.index(runs[-1][-1]) + 1
        ):
            runs[-1].append(value)
        else:
            runs.append([value])
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


def _reason_short(record: dict) -> str:
    """The part of a record's reason that is the same on every combination it applies to:
    "needs kombu >=5.7" without "(this one has 5.5.4)"; the workers' error without which
    worker it was; "" for a verdict that holds."""
    reason = record.get("reason", "")
    if record["verdict"] == "skipped":
        return re.sub(r" \(this one has [^)]*\)", "", reason.split(": ", 1)[0])
    if not reason:
        return ""
    said = reason.rsplit("; ", 1)[-1][:160]
    return f"workers exit at start: {said}" if record["verdict"] == "holds" else said


def verified_summary(slug: str) -> list[dict]:
    """The verified-on table of a claim backed by this experiment, short: one row per outcome,
    with the Celery and Redis series it was recorded on ("Celery 5.5–5.7 × Redis 6.2–7.0",
    "holds"), from the records whose digest matches the experiment file."""
    from teachlab.lab.matrix.envs import celery_series
    from teachlab.lab.matrix.servers import REDIS_SERIES

    try:
        digest = experiment_digest(slug)
        found = [r for r in records_read(slug) if r.get("digest") == digest]
    except (OSError, ValueError):
        return []
    groups: dict[tuple[str, str], dict[str, set[str]]] = {}
    for r in found:
        short = _reason_short(r)
        by_celery = groups.setdefault((r["verdict"], short), {})
        by_celery.setdefault(r["combination"]["celery"], set()).add(r["combination"]["redis"])
    rows = []
    for (verdict, reason), by_celery in groups.items():
        by_redis: dict[tuple, list[str]] = {}
        for celery, redis in by_celery.items():
            by_redis.setdefault(tuple(sorted(redis)), []).append(celery)
        for redis, celery in by_redis.items():
            rows.append(
                {
                    "releases": f"Celery {_spans(celery, celery_series())} × Redis "
                    f"{_spans(list(redis), list(REDIS_SERIES))}",
                    "verdict": verdict,
                    "reason": reason,
                }
            )
    return sorted(rows, key=lambda row: (row["verdict"] != "holds", row["releases"]))

"""What the lab last saw for an experiment a lesson cites: the value each check observed and
the versions the run was on, from the latest finished attempt of that experiment (anyone's).

A lesson says "measured here"; this is where a reader sees what "here" was last time, and
whether the check still holds on this server. An experiment nobody has run on this server
has no last run, and the page says so instead of showing the file's expectation as a result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Max, Q

# The products a run's version record names that a lesson's version line speaks of.
RUN_PRODUCTS = ("rabbitmq", "redis", "celery", "kombu", "redis-py")


@dataclass(frozen=True)
class CheckSeen:
    observed: str  # as the attempt's verdict wrote it ("2", "1, 1")
    passed: bool


@dataclass(frozen=True)
class LastRun:
    slug: str
    finished_at: datetime | None
    checks: dict[str, CheckSeen] = field(default_factory=dict)  # check id -> what it saw
    versions: dict[str, tuple[str, ...]] = field(default_factory=dict)  # product -> versions


class LastRuns(dict):
    """slug -> LastRun for the slugs that have one; `asked` holds every slug looked up, so a
    slug in `asked` but not in the mapping has not run on this server."""

    def __init__(self, found: dict[str, LastRun], asked) -> None:
        super().__init__(found)
        self.asked = frozenset(asked)


def run_versions(result: dict) -> dict[str, tuple[str, ...]]:
    """{product: versions} over the lanes of an attempt's verdict ({} before runs recorded
    versions, or when no worker reported any)."""
    found: dict[str, list[str]] = {}
    for lane_versions in (result.get("versions") or {}).values():
        for product in RUN_PRODUCTS:
            value = (lane_versions or {}).get(product) if isinstance(lane_versions, dict) else None
            if value and value not in found.setdefault(product, []):
                found[product].append(str(value))
    return {k: tuple(v) for k, v in found.items() if v}


def checks_seen(result: dict, order: tuple[str, ...]) -> dict[str, CheckSeen]:
    """Check id -> what it observed. A result carries its check's `id` when the file gives one;
    the others are matched by position, which holds only while the file lists as many checks
    as the attempt evaluated (an experiment edited since then matches by `id` alone)."""
    results = [r for r in result.get("checks") or [] if isinstance(r, dict)]
    same_shape = len(results) == len(order)
    seen: dict[str, CheckSeen] = {}
    for index, r in enumerate(results):
        ident = str(r.get("id") or "") or (order[index] if same_shape else "")
        if ident:
            seen.setdefault(ident, CheckSeen(str(r.get("observed", "")), bool(r.get("passed"))))
    return seen


def last_runs(slugs, orders: dict[str, tuple[str, ...]] | None = None) -> LastRuns:
    """slug -> its latest finished attempt, for the slugs that have one (two queries)."""
    from teachlab.lab.experiments.models import Attempt

    slugs = sorted({s for s in slugs if s})
    if not slugs:
        return LastRuns({}, ())
    done = Attempt.objects.filter(slug__in=slugs, status=Attempt.Status.DONE)
    latest = dict(
        done.exclude(finished_at=None)
        .values("slug")
        .annotate(last=Max("finished_at"))
        .values_list("slug", "last")
    )
    if not latest:
        return LastRuns({}, slugs)
    wanted = Q()
    for slug, at in latest.items():
        wanted |= Q(slug=slug, finished_at=at)
    found: dict[str, LastRun] = {}
    for attempt in done.filter(wanted).order_by("-created_at"):
        if attempt.slug in found:
            continue
        result = attempt.result if isinstance(attempt.result, dict) else {}
        found[attempt.slug] = LastRun(
            slug=attempt.slug,
            finished_at=attempt.finished_at,
            checks=checks_seen(result, (orders or {}).get(attempt.slug, ())),
            versions=run_versions(result),
        )
    return LastRuns(found, slugs)


def experiments_cited(items) -> set[str]:
    """The slugs of the experiments the claims or key points in `items` cite."""
    return {e.experiment for item in items for e in item.evidence if e.kind == "experiment"}


def cited_last_runs(items) -> LastRuns:
    """The last runs of every experiment the claims or key points in `items` cite."""
    from lessons.claim_versions import known_experiments

    slugs = experiments_cited(items)
    known = known_experiments()
    return last_runs(slugs, {s: known[s].order for s in slugs if s in known})

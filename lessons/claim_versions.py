"""Which versions a claim was measured on here, and which it is only documented for.

A claim backed by a lab experiment (or a measurement note) was measured on what the lab runs;
one backed only by documentation or library source holds for the versions those name, and the
page says so: "measured here on RabbitMQ 3.10.8, Celery 5.7.0, kombu 5.7.0 (…)" or
"documented for RabbitMQ 4.3 (not measured here)". An experiment's versions come from its last
recorded run on this server (lessons/last_runs.py) when there is one, else from the lab's
declared versions (lessons/lab_versions.py), and the line says which.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lessons.evidence import PRODUCTS
from lessons.evidence_context import evidence_stamp, experiments_dir, facts_file
from lessons.experiment_refs import ExperimentChecks, experiment_checks
from lessons.lab_versions import ALWAYS, lab_versions

# The order products are named in: the broker first, then the libraries.
_ORDER = ("rabbitmq", "redis", "celery", "kombu", "redis-py")
_FACT = re.compile(r"^(\d+)\.\s+(.+?)(?=^\d+\.\s|^#|\Z)", re.M | re.S)
_CLAUSE = re.compile(r"^\s*(==|!=|>=|<=|~=|>|<)?\s*(\S+?)\s*$")
_WORDS = {
    ">=": "{} or later",
    ">": "later than {}",
    "<=": "up to {}",
    "<": "before {}",
    "==": "{}",
    "!=": "not {}",
    "~=": "compatible with {}",
    None: "{}",
}
RECORDED = "as its last runs here recorded them"
DECLARED = "the lab's declared versions; no run recorded on this server yet"
MIXED = "as its last runs here recorded them, else the lab's declared versions"


@lru_cache(maxsize=2)
def _experiments(stamp: tuple) -> dict[str, ExperimentChecks]:
    return experiment_checks(experiments_dir())


def known_experiments() -> dict[str, ExperimentChecks]:
    """The experiment files' checks and brokers, read again when a file changes."""
    return _experiments(evidence_stamp())


@lru_cache(maxsize=2)
def _fact_brokers(stamp: tuple) -> dict[int, frozenset[str]]:
    """The brokers a measurement note talks about, from its text."""
    try:
        text = facts_file().read_text(encoding="utf-8")
    except OSError:
        return {}
    found = {}
    for match in _FACT.finditer(text):
        body = match.group(2)
        brokers = {"rabbitmq"} if "RabbitMQ" in body else set()
        if "Redis" in body or "redis" in body or "`unacked`" in body:
            brokers.add("redis")
        found[int(match.group(1))] = frozenset(brokers)
    return found


def measured_here(evidence, recorded: dict) -> tuple[dict[str, tuple[str, ...]], str]:
    """{product: versions} it was measured on here, and where those come from: an
    experiment's versions from its last run (`recorded`: slug -> lessons.last_runs.LastRun),
    else the lab's declared ones, as for the measurement notes. The second item is RECORDED,
    DECLARED or MIXED ("" when nothing here measured it)."""
    stamp = evidence_stamp()
    experiments = _experiments(stamp)
    facts = _fact_brokers(stamp)
    lab = lab_versions()
    found: dict[str, list[str]] = {}
    sources: set[str] = set()

    def add(product: str, values, source: str) -> None:
        sources.add(source)
        for value in values:
            if value not in found.setdefault(product, []):
                found[product].append(value)

    for e in evidence:
        if e.kind == "experiment":
            slug = e.experiment or ""
            known = experiments.get(slug)
            run = recorded.get(slug)
            for product in (*(known.brokers if known else ()), *ALWAYS):
                if run is not None and run.versions.get(product):
                    add(product, run.versions[product], "recorded")
                elif product in lab:
                    add(product, [lab[product]], "declared")
        elif e.kind == "measured":
            item = dict(e.detail).get("item", "")
            noted = facts.get(int(item), ()) if item.isdigit() else ()
            for product in (*noted, *ALWAYS):
                if product in lab:
                    add(product, [lab[product]], "declared")
    versions = {p: tuple(found[p]) for p in _ORDER if found.get(p)}
    if not versions:
        return {}, ""
    if sources == {"recorded"}:
        return versions, RECORDED
    return versions, DECLARED if sources == {"declared"} else MIXED


def measured_on(evidence) -> dict[str, str]:
    """{product: version} the lab measured this on, by its declared versions (what CI can
    know without a database); empty when nothing here measured it."""
    versions, _source = measured_here(evidence, {})
    return {k: v[0] for k, v in versions.items()}


def version_range_spoken(spec: str) -> str:
    """ ">=3.11.15,<4.3" as "3.11.15 or later and before 4.3"; ">=4.0,<=4.3" as "4.0 to 4.3"."""
    clauses = [_CLAUSE.match(part) for part in str(spec).split(",")]
    if not all(clauses):
        return str(spec)
    pairs = [(m.group(1), m.group(2)) for m in clauses]
    if len(pairs) == 2 and pairs[0][0] == ">=" and pairs[1][0] == "<=":
        return f"{pairs[0][1]} to {pairs[1][1]}"
    return " and ".join(_WORDS[op].format(version) for op, version in pairs)


def documented_for(evidence) -> list[str]:
    """What documentation and library source it rests on, as "RabbitMQ 4.3" or
    "kombu >=5.7,<5.8 (source)", in order and without repeats."""
    found: list[str] = []
    for e in evidence:
        if e.kind == "docs" and e.version:
            text = e.version
        elif e.kind == "source":
            detail = dict(e.detail)
            text = f"{detail.get('package', '')} {detail.get('versions', '')} (source)"
        else:
            continue
        if text not in found:
            found.append(text)
    return found


def _sources_spoken(evidence) -> list[str]:
    """The library source it rests on, as "Celery 5.7 or later and before 5.8"."""
    found: list[str] = []
    for e in evidence:
        if e.kind == "source":
            detail = dict(e.detail)
            package = detail.get("package", "")
            text = f"{PRODUCTS.get(package, package)} {version_range_spoken(detail.get('versions', ''))}"
            if text not in found:
                found.append(text)
    return found


def version_line(evidence, recorded: dict | None = None) -> str:
    """The one line a page shows per key point or claim about where it was established:
    "measured here on Redis 7.0.15, Celery 5.7.0, kombu 5.7.0 (…)", "documented for
    RabbitMQ 4.3 (not measured here)", or where in the library source it was read."""
    measured, source = measured_here(evidence, recorded or {})
    documented = [d for d in documented_for(evidence) if not d.endswith("(source)")]
    if measured:
        spoken = ", ".join(f"{PRODUCTS.get(k, k)} {' and '.join(v)}" for k, v in measured.items())
        line = f"measured here on {spoken} ({source})"
        if documented:
            line += f"; documented for {', '.join(documented)}"
        return line
    if documented:
        return f"documented for {', '.join(documented)} (not measured here)"
    sources = _sources_spoken(evidence)
    if sources:
        return f"read in the source of {', '.join(sources)} (not measured here)"
    return ""

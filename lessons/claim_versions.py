"""Which versions a claim was measured on here, and which it is only documented for.

A claim backed by a lab experiment (or a measurement note) was measured on what the lab runs
(lessons/lab_versions.py); one backed only by documentation or library source holds for the
versions those name, and the page says so: "measured here on RabbitMQ 3.10.8, Celery 5.7.0" or
"documented for RabbitMQ 4.3 (not measured here)".
"""

from __future__ import annotations

import re
from functools import lru_cache

from lessons.evidence import (
    PRODUCTS,
    evidence_stamp,
    experiments_dir,
    facts_file,
)
from lessons.experiment_refs import experiment_checks
from lessons.lab_versions import ALWAYS, lab_versions

# The order products are named in: the broker first, then the libraries.
_ORDER = ("rabbitmq", "redis", "celery", "kombu", "redis-py")
_FACT = re.compile(r"^(\d+)\.\s+(.+?)(?=^\d+\.\s|^#|\Z)", re.M | re.S)


@lru_cache(maxsize=2)
def _experiment_brokers(stamp: tuple) -> dict[str, frozenset[str]]:
    return {slug: e.brokers for slug, e in experiment_checks(experiments_dir()).items()}


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


def measured_on(evidence) -> dict[str, str]:
    """{product: version} the lab measured this on, empty when nothing here measured it."""
    stamp = evidence_stamp()
    experiments = _experiment_brokers(stamp)
    facts = _fact_brokers(stamp)
    products: set[str] = set()
    for e in evidence:
        if e.kind == "experiment":
            products |= {*experiments.get(e.experiment or "", ()), *ALWAYS}
        elif e.kind == "measured":
            item = dict(e.detail).get("item", "")
            products |= {*facts.get(int(item), ()), *ALWAYS} if item.isdigit() else set(ALWAYS)
    lab = lab_versions()
    return {p: lab[p] for p in _ORDER if p in products and p in lab}


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


def product_versions_spoken(versions: dict[str, str]) -> str:
    """{"rabbitmq": "3.10.8", "celery": "5.7.0"} as "RabbitMQ 3.10.8, Celery 5.7.0"."""
    return ", ".join(f"{PRODUCTS.get(k, k)} {v}" for k, v in versions.items())


def version_line(evidence) -> str:
    """The one line a page shows per key point or claim about where it was established."""
    measured = measured_on(evidence)
    documented = [d for d in documented_for(evidence) if not d.endswith("(source)")]
    if measured:
        line = f"measured here on {product_versions_spoken(measured)}"
        if documented:
            line += f"; documented for {', '.join(documented)}"
        return line
    if documented:
        return f"documented for {', '.join(documented)} (not measured here)"
    sources = documented_for(evidence)
    if sources:
        shown = ", ".join(s.removesuffix(" (source)") for s in sources)
        return f"read in the source of {shown} (not measured here)"
    return ""

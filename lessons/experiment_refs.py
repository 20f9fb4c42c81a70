"""What a lesson may cite from an experiment: its checks, by id, and the brokers it runs on.

An `experiment` reference names the checks that show the claim (`checks: [id, ...]`), so a
reader sees which observed facts back it, not just that an experiment exists. A check's id is
its `id:` or, without one, its `what:` (which must then name one check only). Read straight
from the YAML files, so a lesson can be validated while the lab's own catalog is mid-change.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from lessons.yamlread import file_data

# The lab's lanes say "redis" or "rabbit"; lessons name products by these keys
# (lessons/evidence.py PRODUCTS).
BROKER_PRODUCTS = {"redis": "redis", "rabbit": "rabbitmq"}


@dataclass(frozen=True)
class ExperimentChecks:
    slug: str
    title: str
    says: dict[str, str]  # check id -> the sentence it proves
    ambiguous: frozenset[str] = frozenset()  # ids (a `what` without `id`) naming two checks
    brokers: frozenset[str] = field(default_factory=frozenset)  # product keys of its lanes
    order: tuple[str, ...] = ()  # every check's id in file order, as an attempt lists results


def _usable(checks: list) -> list[dict]:
    return [c for c in checks if isinstance(c, dict) and c.get("what")]


def check_order(checks: list) -> tuple[str, ...]:
    """Each check's id (its `id`, else its `what`) in file order: the order in which an
    attempt lists its results, so a result without an `id` can still be matched."""
    return tuple(str(c.get("id") or c["what"]) for c in _usable(checks))


def check_ids(checks: list) -> tuple[dict[str, str], frozenset[str]]:
    """{id: says} for a list of check mappings, and the ids that name more than one check."""
    usable = _usable(checks)
    ids = list(check_order(checks))
    counts = Counter(ids)
    says: dict[str, str] = {}
    for check, ident in zip(usable, ids, strict=True):
        says.setdefault(ident, str(check.get("says") or ""))
    return says, frozenset(i for i, n in counts.items() if n > 1)


def lane_brokers() -> dict[str, str]:
    """Lane name -> product key ("redis", "rabbitmq"), from the lab's one lane table."""
    try:
        from teachlab.lab.runs.lanes import LANE_TABLE
    except ImportError:
        return {}
    from django.conf import settings

    entries = [*LANE_TABLE, *getattr(settings, "LAB_EXTRA_LANES", [])]
    return {
        e["name"]: BROKER_PRODUCTS.get(e.get("broker"), e.get("broker"))
        for e in entries
        if isinstance(e, dict) and "name" in e
    }


def experiment_checks(directory: Path) -> dict[str, ExperimentChecks]:
    """Every experiment file in `directory`, by slug (a file that does not parse is skipped;
    the lab's validator reports it)."""
    lanes = lane_brokers()
    found: dict[str, ExperimentChecks] = {}
    for path in sorted(Path(directory).glob("*.yaml")):
        try:
            data = file_data(path)
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("slug"), str):
            continue
        checks = data.get("checks") if isinstance(data.get("checks"), list) else []
        says, ambiguous = check_ids(checks)
        runs = data.get("runs") if isinstance(data.get("runs"), list) else []
        brokers = {
            lanes.get(r.get("lane"), "") for r in runs if isinstance(r, dict) and r.get("lane")
        }
        found[data["slug"]] = ExperimentChecks(
            slug=data["slug"],
            title=str(data.get("title") or data["slug"]),
            says=says,
            ambiguous=ambiguous,
            brokers=frozenset(b for b in brokers if b),
            order=check_order(checks),
        )
    return found


def checks_problem(slug: str, cited: tuple[str, ...], known: ExperimentChecks | None) -> str | None:
    """Why `cited` cannot stand as evidence from experiment `slug`, or None."""
    if known is None:
        return None  # the slug itself is checked where the reference is read
    if not cited:
        listed = ", ".join(sorted(known.says)) or "none"
        return f"experiment {slug}: name the checks that show it (checks: [...]; it has: {listed})"
    missing = [c for c in cited if c not in known.says]
    if missing:
        listed = ", ".join(sorted(known.says)) or "none"
        return f"experiment {slug} has no check {', '.join(map(repr, missing))} (it has: {listed})"
    unclear = [c for c in cited if c in known.ambiguous]
    if unclear:
        return (
            f"experiment {slug}: {', '.join(map(repr, unclear))} names more than one check; "
            "give those checks an `id:` in the experiment file"
        )
    return None

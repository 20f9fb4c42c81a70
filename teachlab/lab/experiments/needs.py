"""An experiment's `needs`: the Celery and kombu releases its checks depend on, and why.

Plain functions on plain data: the catalog checks the ranges, `lab matrix` asks whether a
combination's lock pins meet them (an unmet one is recorded as skipped, with the reason).
"""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

NEEDS_PACKAGES = ("celery", "kombu")


def range_problem(spec: object) -> str:
    """Why `spec` is not a version range like ">=5.7" ("" when it is one)."""
    example = 'a version range like ">=5.7" or ">=5.5,<5.7"'
    if not isinstance(spec, str) or not spec.strip():
        return f"must be {example}, not {spec!r}"
    try:
        ranges = SpecifierSet(spec)
    except InvalidSpecifier:
        return f"must be {example}, not {spec!r}"
    if not len(ranges):
        return f"must be {example}, not {spec!r}"
    return ""


def needs_unmet(needs: dict, pins: dict[str, str]) -> str:
    """Why a worker environment with these pinned versions cannot show the experiment
    ("" when every range holds)."""
    missed = []
    for name in NEEDS_PACKAGES:
        if name not in needs:
            continue
        version = pins.get(name, "")
        try:
            held = SpecifierSet(needs[name]).contains(Version(version), prereleases=True)
        except InvalidVersion:
            held = False
        if not held:
            missed.append(f"{name} {needs[name]} (this one has {version or 'none'})")
    if not missed:
        return ""
    return f"needs {', '.join(missed)}: {needs['why'].strip()}"

"""Which versions the lab measures on, so a lesson can say "measured here on RabbitMQ 3.10.8"
and the validator can refuse an experiment as evidence for a claim about other versions.

The Python packages are read from the installed distributions. The broker servers are what
this machine kind runs (Debian's RabbitMQ 3.10.8 and Redis 7.0.15; RabbitMQ 4.x cannot be
installed here). Each run records the versions it really ran on; these are what the lessons
may claim as "measured here".
"""

from __future__ import annotations

from importlib import metadata

BROKER_VERSIONS = {"rabbitmq": "3.10.8", "redis": "7.0.15"}
PACKAGES = {"celery": "celery", "kombu": "kombu", "redis-py": "redis"}
# A lab experiment always runs Celery and kombu; its lanes add the broker.
ALWAYS = ("celery", "kombu")


def lab_versions() -> dict[str, str]:
    """{product key: version} for everything the lab runs."""
    found = dict(BROKER_VERSIONS)
    for key, dist in PACKAGES.items():
        try:
            found[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return found


def version_allows(spec: str, version: str) -> bool:
    """Whether `version` satisfies a lesson's range (">=3.8,<=4.3", "==5.7.*", "4.1")."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    text = str(spec).strip()
    if text and text[0].isdigit():
        text = f"=={text}.*" if text.count(".") < 2 else f"=={text}"
    try:
        return SpecifierSet(text).contains(version, prereleases=True)
    except InvalidSpecifier:
        return True  # the range's own syntax is checked where it is read

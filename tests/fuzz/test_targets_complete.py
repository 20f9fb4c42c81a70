"""Every URL pattern and every socket frame type has a fuzz target (or a stated exemption), so
a new endpoint cannot be left out of tests/fuzz/targets.py unnoticed. The failure lists what
was found without a target."""

from __future__ import annotations

import inspect
import re

from django.urls import URLPattern, URLResolver, get_resolver

from teachlab.core import health
from teachlab.lab.live.consumers import RunConsumer
from teachlab.workshop import frames
from tests.fuzz.targets import EXEMPT, FRAMES, HTTP, PAGES


def url_patterns(resolver=None, namespace: str = "", prefix: str = "") -> list[str]:
    """Each pattern as `namespace:name`, or its route when it has no name."""
    found = []
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            ns = entry.namespace or ""
            inner = f"{namespace}:{ns}".strip(":") if ns else namespace
            found += url_patterns(entry, inner, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            if entry.name:
                found.append(f"{namespace}:{entry.name}".strip(":"))
            else:
                found.append(prefix + str(entry.pattern))
    return found


def health_paths() -> list[str]:
    """The paths the health middleware answers before any URL pattern."""
    return re.findall(r'request\.path == "([^"]+)"', inspect.getsource(health))


def frame_types() -> list[str]:
    lab = re.findall(r'get\("action"\) == "(\w+)"', inspect.getsource(RunConsumer))
    workshop = {**frames.PARTICIPANT_ACTIONS, **frames.PRESENTER_ACTIONS}
    return [f"lab:{a}" for a in lab] + [f"workshop:{a}" for a in workshop]


def _exempt(name: str) -> bool:
    return any(
        name == rule or (rule.endswith("*") and name.startswith(rule[:-1])) for rule in EXEMPT
    )


def test_every_url_pattern_and_health_path_has_a_fuzz_target():
    found = sorted(set(url_patterns()) | set(health_paths()))
    covered = set(HTTP) | set(PAGES)
    missing = [name for name in found if name not in covered and not _exempt(name)]
    assert not missing, (
        f"URL patterns with no fuzz target (add them to tests/fuzz/targets.py): {missing}"
    )
    stale = sorted(covered - set(found))
    assert not stale, f"fuzz targets for patterns that no longer exist: {stale}"
    assert len(found) > 40, found  # the walk found the app's patterns, not an empty list


def test_every_socket_frame_type_has_a_fuzz_target():
    found = frame_types()
    missing = [name for name in found if name not in FRAMES]
    assert not missing, (
        f"frame types with no fuzz target (add them to tests/fuzz/targets.py): {missing}"
    )
    stale = sorted(set(FRAMES) - set(found))
    assert not stale, f"fuzz targets for frame types that no longer exist: {stale}"
    assert "lab:resync" in found and "workshop:vote" in found, found

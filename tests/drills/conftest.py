"""The drills' own stack (tests/drills/stack.py), started once for the package: each drill
breaks one part of it and checks that it came back and what was kept."""

from __future__ import annotations

import pytest

from tests.drills.stack import DrillStack


@pytest.fixture(scope="package")
def drill_stack():
    stack = DrillStack()
    try:
        yield stack.start()
    finally:
        stack.stop()

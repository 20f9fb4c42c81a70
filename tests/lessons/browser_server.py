"""A daphne server over the fixture lessons, shared by the lesson browser tests: the walk
and the accessibility scan then see the same two known questions whatever content exists."""

from __future__ import annotations

import pytest

from tests.lessons.lessonfiles import FIXTURES
from tests.stack import LiveServer


@pytest.fixture(scope="session")
def fixture_lessons_url():
    server = LiveServer(
        TEACHLAB_LESSONS_DIR=str(FIXTURES), TEACHLAB_ALLOWED_HOSTS="127.0.0.1,localhost"
    ).start()
    yield server.url
    server.stop()

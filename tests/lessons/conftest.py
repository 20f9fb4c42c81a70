"""Fixtures of the lesson tests. `fixture_lessons_url`: one daphne server over the fixture
lessons, shared by the lesson browser tests so the walk and the accessibility scan see the same
two known questions whatever is in lessons/content/."""

from __future__ import annotations

import pytest

from tests.lessons.lessonfiles import FIXTURES
from tests.support.servers import LiveServer


@pytest.fixture(scope="session")
def fixture_lessons_url():
    server = LiveServer(
        TEACHLAB_LESSONS_DIR=str(FIXTURES), TEACHLAB_ALLOWED_HOSTS="127.0.0.1,localhost"
    ).start()
    yield server.url
    server.stop()

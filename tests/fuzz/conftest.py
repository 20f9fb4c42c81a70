"""What the fuzz package switches off, all of it cost and none of it under test:

- Django's test instrumentation of templates (a signal per template rendered and a copy of
  its context): the fuzz tests never read `response.context`;
- the warning logged for every 4xx (`django.request`), thousands of lines nobody reads;
- the slow password hasher: sign-in and sign-up targets hash a password per input.

And what it keeps apart: the app's Redis database. The suite's lab stack (workers, monitors,
the workshop's room lab) shares the test Redis and keeps writing `lab:*` keys for runs of
earlier tests; a fuzz test that compares those keys before and after a refused input must
see only what its own inputs do, so it gets a database of its own, emptied first.
"""

from __future__ import annotations

import logging
import os

import pytest
from django.template import Template
from django.test.utils import _TestState

from teachlab.lab.runs.store import app_redis
from tests.fuzz.world import INPUTS_SENT, WriteWatch

FUZZ_REDIS_DB = 12  # none of settings.REDIS_DB_* nor a lane's database (lanes.py) uses it


@pytest.fixture(autouse=True)
def fuzz_without_test_overheads(monkeypatch, settings):
    saved = getattr(_TestState, "saved_data", None)
    if saved is not None:
        monkeypatch.setattr(Template, "_render", saved.template_render)
    WriteWatch.install(monkeypatch)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.REDIS_DB_APP = FUZZ_REDIS_DB
    app_redis().flushdb()
    quiet = [logging.getLogger(name) for name in ("django.request", "django.security")]
    levels = [logger.level for logger in quiet]
    for logger in quiet:
        logger.setLevel(logging.ERROR)
    yield
    for logger, level in zip(quiet, levels, strict=True):
        logger.setLevel(level)


def pytest_terminal_summary(terminalreporter):
    """How many generated inputs each target got: the evidence for the count CI promises."""
    if not INPUTS_SENT:
        return
    fewest = min(INPUTS_SENT, key=INPUTS_SENT.get)
    terminalreporter.write_line(
        f"fuzz: {sum(INPUTS_SENT.values())} generated inputs over {len(INPUTS_SENT)} targets, "
        f"fewest {INPUTS_SENT[fewest]} ({fewest}), most {max(INPUTS_SENT.values())}"
    )


def pytest_collection_modifyitems(config, items):
    """TEACHLAB_FUZZ_SHARD=i/n keeps every n-th fuzz test from the i-th (1-based), so
    scripts/test can run the package as n processes side by side; other tests are untouched."""
    shard = os.environ.get("TEACHLAB_FUZZ_SHARD", "")
    if not shard:
        return
    index, count = (int(part) for part in shard.split("/"))
    fuzz = sorted(
        (item for item in items if item.nodeid.startswith("tests/fuzz/")), key=lambda i: i.nodeid
    )
    dropped = {item.nodeid for n, item in enumerate(fuzz) if n % count != index - 1}
    config.hook.pytest_deselected(items=[i for i in items if i.nodeid in dropped])
    items[:] = [item for item in items if item.nodeid not in dropped]

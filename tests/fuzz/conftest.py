"""What the fuzz package switches off, all of it cost and none of it under test:

- Django's test instrumentation of templates (a signal per template rendered and a copy of
  its context): the fuzz tests never read `response.context`;
- the warning logged for every 4xx (`django.request`), thousands of lines nobody reads;
- the slow password hasher: sign-in and sign-up targets hash a password per input.
"""

from __future__ import annotations

import logging

import pytest
from django.template import Template
from django.test.utils import _TestState


@pytest.fixture(autouse=True)
def fuzz_without_test_overheads(monkeypatch, settings):
    saved = getattr(_TestState, "saved_data", None)
    if saved is not None:
        monkeypatch.setattr(Template, "_render", saved.template_render)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    quiet = [logging.getLogger(name) for name in ("django.request", "django.security")]
    levels = [logger.level for logger in quiet]
    for logger in quiet:
        logger.setLevel(logging.ERROR)
    yield
    for logger, level in zip(quiet, levels, strict=True):
        logger.setLevel(level)

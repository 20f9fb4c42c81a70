"""Fuzz targets render thousands of pages and never read `response.context`: Django's test
instrumentation (a signal per template rendered, and a copy of its context) is switched off
for them, which is most of the test client's own cost per request."""

from __future__ import annotations

import pytest
from django.template import Template
from django.test.utils import _TestState


@pytest.fixture(autouse=True)
def plain_template_rendering(monkeypatch):
    saved = getattr(_TestState, "saved_data", None)
    if saved is not None:
        monkeypatch.setattr(Template, "_render", saved.template_render)

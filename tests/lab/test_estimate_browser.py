"""The run form's cost estimate in Chromium: it is redrawn as the learner types, before
anything is fired, and says when the run would be refused."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser]


def test_the_estimate_follows_the_form_as_the_learner_types(page, live_server_url):
    page.goto(f"{live_server_url}/lab/")
    estimate = page.locator("#estimate")
    expect(estimate).to_contain_text("about 3 deliveries")  # the form's first run
    page.get_by_role("combobox", name="Lane").select_option("redis-short")
    page.get_by_label("How many tasks").fill("300")
    page.get_by_label("Countdown (s)").fill("90")
    expect(estimate).to_contain_text(
        "about 2,700 deliveries, 31 MB of worker memory, 90 s", timeout=10_000
    )
    page.get_by_label("Countdown (s)").fill("10800")
    page.get_by_label("How many tasks").fill("2000")
    expect(estimate).to_contain_text("one run may make at most 10,000 deliveries", timeout=10_000)
    page.get_by_label("How many tasks").fill("-5")
    expect(estimate).to_contain_text("count cannot be less than 1", timeout=10_000)
    assert page.url == f"{live_server_url}/lab/"  # nothing was fired

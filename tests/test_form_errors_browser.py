"""A form the server refuses comes back with its errors in view and focused, not below the
fold of a page that opens at its top: the lab's run form and the progress import (issue 29)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def in_view(page, selector: str) -> bool:
    return page.locator(selector).evaluate(
        "el => { const r = el.getBoundingClientRect();"
        " return r.top >= 0 && r.bottom <= window.innerHeight; }"
    )


def test_a_refused_run_opens_at_its_errors_with_focus_on_them(page, live_server_url):
    page.goto(f"{live_server_url}/lab/")
    page.get_by_label("How many tasks").fill("5000")
    page.get_by_role("button", name="Fire", exact=True).click()
    errors = page.locator("#run-errors")
    expect(errors).to_be_focused()
    expect(errors).to_contain_text("Not fired.")
    expect(errors.get_by_role("link", name="How many tasks")).to_be_visible()
    assert in_view(page, "#run-errors")
    errors.get_by_role("link", name="How many tasks").click()
    expect(page.locator("#id_count")).to_have_value("5000")


def test_a_refused_progress_file_opens_at_its_problems_with_focus_on_them(page, live_server_url):
    page.goto(f"{live_server_url}/progress/")
    page.set_input_files(
        "#progress-file",
        files=[{"name": "progress.json", "mimeType": "application/json", "buffer": b'{"no": 1}'}],
    )
    page.get_by_role("button", name="Import").click()
    problems = page.locator("#import-problems")
    expect(problems).to_be_focused()
    expect(problems).to_contain_text("Nothing was imported.")
    assert in_view(page, "#import-problems")

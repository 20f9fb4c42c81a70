"""A learner opens the evidence behind a key point in Chromium: from "How we know" on a question
page to the measurement note, the seed's case study and the library function's source, each a
page of its own that axe finds no serious problem on."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS
from tests.lessons.test_accessibility import serious_violations

pytestmark = pytest.mark.browser

QUESTION = "/q/raise-visibility-timeout/"


def open_from_how_we_know(page, link_selector: str) -> None:
    """Show the key points, open the first "How we know" holding `link_selector`, follow it."""
    page.get_by_text(re.compile(r"^Show the \d+ key points$")).click()
    box = page.locator("details.how-we-know", has=page.locator(link_selector)).first
    box.locator("summary").click()
    link = box.locator(link_selector).first
    expect(link).to_be_visible()
    link.click()


def test_a_learner_opens_a_note_a_case_study_and_a_source_view_from_how_we_know(
    page, live_server_url
):
    question = f"{live_server_url}{QUESTION}"
    page.goto(question)

    open_from_how_we_know(page, 'a[href="/evidence/notes/4/"]')
    expect(page).to_have_url(f"{live_server_url}/evidence/notes/4/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("A SIGKILL strands held messages")
    expect(page.get_by_text("60 s timeout, 30 s countdown")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "evidence-note.png"), full_page=True)
    expect(page.get_by_role("link", name=re.compile("Raising visibility_timeout"))).to_be_visible()
    assert serious_violations(page) == []

    page.goto(question)
    open_from_how_we_know(page, 'a[href^="/evidence/cases/"]')
    expect(page).to_have_url(f"{live_server_url}/evidence/cases/payout-timeouts-at-12-hours/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Payout timeouts at 12 hours")
    expect(page.get_by_role("heading", name="What it backs in the lessons")).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "evidence-case.png"), full_page=True)
    assert serious_violations(page) == []

    page.goto(question)
    open_from_how_we_know(page, 'a[href^="/evidence/source/kombu.transport.redis/"]')
    expect(page).to_have_url(re.compile(r"/evidence/source/kombu\.transport\.redis/[\w.]+/$"))
    marked = page.locator(".source-code .hll").first
    expect(marked).to_be_visible()
    number = int(re.search(r"Marked below: lines? (\d+)", page.content()).group(1))
    # The marked line carries its number in the installed file.
    expect(marked.locator(".linenos")).to_have_text(re.compile(rf"^\s*{number}$"))
    page.screenshot(path=str(ARTIFACTS / "evidence-source.png"), full_page=True)
    assert serious_violations(page) == []

"""Phones follow the room in Chromium at 390×844: a vote or an answer box that opens while the
participant reads far down the page (a senior tier) is brought to the top of the screen."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.workshop.test_browser import _connected, _instructor, _participant

pytestmark = pytest.mark.browser


def _read_to_the_bottom(page) -> None:
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_timeout(300)  # let the scroll land before the room moves on


def test_a_vote_or_answer_box_that_opens_is_brought_into_view_on_a_phone(browser, live_server_url):
    console = _instructor(browser, live_server_url)
    code = console.locator(".present-head .code").inner_text().strip()
    ana = _participant(browser, live_server_url, code, "Ana")
    _connected(ana)
    _connected(console)

    console.click("form.drive button[data-tier=senior]")
    expect(ana.locator("#ws-stage")).to_have_attribute("data-tier", "senior")
    _read_to_the_bottom(ana)
    # The page is long enough that the top of it is out of sight.
    expect(ana.locator(".room-head h1")).not_to_be_in_viewport()

    console.locator("#ws-claims button[data-claim]").first.click()
    expect(ana.locator("#ws-claim")).to_have_attribute("data-state", "open")
    expect(ana.locator("#ws-claim .vote-buttons")).to_be_in_viewport(ratio=1)

    ana.click("button.vote.holds")
    expect(ana.locator("#ws-myvote")).to_contain_text("Your vote")
    console.click("button.reveal-btn")
    expect(ana.locator("#ws-claim")).to_have_attribute("data-state", "revealed")
    console.click("form.drive button[data-tier=senior]")
    _read_to_the_bottom(ana)
    expect(ana.locator("#ws-claim .verdict")).not_to_be_in_viewport()

    console.click("button.answers-start")
    expect(ana.locator("#ws-answers")).to_have_attribute("data-state", "open")
    expect(ana.locator("#ws-answers #answer-text")).to_be_in_viewport(ratio=1)
    for page in (ana, console):
        page.context.close()

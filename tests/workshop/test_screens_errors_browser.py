"""The console and the projector through a whole claim and answer round, in Chromium, with
nothing in either browser's console: the walk of issue 28 counted 38 CSP inline-style
errors on the console and 20 htmx:oobErrorNoTarget on the projector. Also what the reveal
colours and which controls the console shows when they cannot apply."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.workshop.test_browser import _connected, _instructor, _participant

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1366, "height": 768}


def _errors_of(page: Page) -> list[str]:
    """Every error the page logs (CSP refusals and htmx's error events are logged as errors)
    and every uncaught exception, as they happen."""
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.append(f"uncaught: {e}"))
    return seen


def test_console_and_projector_log_no_error_through_a_claim_and_an_answer_round(
    browser, live_server_url
):
    base = live_server_url
    console = _instructor(browser, base)
    console_errors = _errors_of(console)
    console.reload()  # the errors of the page's first load counted too
    code = console.locator(".present-head .code").inner_text().strip()
    projector = browser.new_context(
        viewport=PROJECTOR, storage_state=console.context.storage_state()
    ).new_page()
    projector_errors = _errors_of(projector)
    projector.goto(f"{base}{console.locator('a.open-screen').get_attribute('href')}")
    people = [_participant(browser, base, code, name) for name in ("Ana", "Bo")]
    for page in (console, projector, *people):
        _connected(page)

    # Before any claim: nothing to reveal, time or end, so no such button in sight.
    for control in ("button.reveal-btn", "button.timer-btn", "button.answers-end"):
        expect(console.locator(control)).to_be_hidden()

    console.click("form.drive button[data-tier=solid]")
    expect(projector.locator("#ws-stage")).to_have_attribute("data-tier", "solid")
    console.locator("#ws-claims button[data-claim]").first.click()
    for page in people:
        expect(page.locator("#ws-claim")).to_have_attribute("data-state", "open")
    people[0].click("button.vote.holds")
    people[1].click("button.vote.costs")
    expect(console.locator("#ws-answered")).to_contain_text("answered 2 of 2 present")
    expect(projector.locator("#ws-answered")).to_contain_text("answered 2 of 2 present")
    console.fill("#claim-seconds", "30")
    console.click("button.timer-btn")
    expect(projector.locator("#ws-claimtimer")).to_contain_text("Votes close in")
    console.click("button.reveal-btn")
    for page in (console, projector, *people):
        expect(page.locator("#ws-claim")).to_have_attribute("data-state", "revealed")
        # The right answer's bar is the one marked right, whichever side it is.
        right = page.locator("#ws-claim .split .bar.right")
        expect(right).to_have_count(1)
        verdict = page.locator("#ws-claim .verdict").get_attribute("class")
        side = "holds" if "holds" in verdict else "costs"
        expect(right).to_have_class(f"bar {side} right")
        expect(page.locator("#ws-claim .split .bar.wrong")).to_have_count(1)
    # Revealed: the vote timer and the reveal cannot apply any more.
    expect(console.locator("button.reveal-btn")).to_be_hidden()
    expect(console.locator("button.timer-btn")).to_be_hidden()

    console.fill("#answers-seconds", "30")
    console.click("button.answers-start")
    for page in people:
        expect(page.locator("#ws-answers")).to_have_attribute("data-state", "open")
    people[0].fill("#answer-text", "Make the handler idempotent")
    people[0].click("form.answer-form button[type=submit]")
    expect(projector.locator("#ws-answercount")).to_have_text("1 answer in")
    expect(console.locator("button.answers-start")).to_be_hidden()  # one round at a time
    # While the room writes, the tiers wait: the console cannot show another one.
    expect(console.locator("form.drive button[data-tier=senior]")).to_be_hidden()
    console.click("button.answers-end")
    console.locator("button.answer-show").first.click()
    expect(projector.locator(".shown-answer")).to_have_text("Make the handler idempotent")

    console.click("form.drive button[data-tier=senior]")
    expect(projector.locator("#ws-stage")).to_have_attribute("data-tier", "senior")
    projector.reload()
    console.reload()
    _connected(projector)
    _connected(console)
    console.wait_for_timeout(500)  # a late frame's errors would land now
    assert console_errors == [], console_errors
    assert projector_errors == [], projector_errors
    for page in (*people, projector, console):
        page.context.close()

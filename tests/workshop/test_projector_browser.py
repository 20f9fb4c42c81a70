"""The projector view beside the instructor console, in Chromium: a timed vote and an answer
round, with one participant on a phone and one on a laptop, against the live server."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.conftest import ARTIFACTS
from tests.workshop.test_browser import PHONE, _connected, _instructor, serious_violations

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1366, "height": 768}
LAPTOP = {"width": 1280, "height": 800}


def _participant(browser: Browser, base: str, code: str, nickname: str, viewport) -> Page:
    page = browser.new_context(viewport=viewport).new_page()
    page.goto(f"{base}/workshop/join/?code={code}")
    page.fill("#join-nick", nickname)
    page.click("form.join-form button[type=submit]")
    expect(page.locator(".who .nick")).to_have_text(nickname)
    return page


def _above_the_fold(page: Page, selector: str) -> None:
    box = page.locator(selector).first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= PROJECTOR["height"], (selector, box)


def test_a_timed_vote_and_an_answer_round_on_console_projector_and_phones(browser, live_server_url):
    base = live_server_url
    console = _instructor(browser, base)
    code = console.locator(".present-head .code").inner_text().strip()
    screen_url = console.locator("a.open-screen").get_attribute("href")
    projector = console.context.new_page()  # the instructor's session, on the big screen
    projector.set_viewport_size(PROJECTOR)
    projector.goto(f"{base}{screen_url}")
    expect(projector.locator(".screen-join .code")).to_have_text(code)
    expect(projector.locator(".screen-join .join-page")).to_contain_text("/workshop/join/")
    expect(projector.locator(".screen-join .join-warning")).to_contain_text("cannot use")
    assert projector.locator(".screen-join .qr-figure svg").count() == 1
    assert projector.locator("form, button, input, textarea, .site-header").count() == 0

    # Ana's socket goes through a route, so the test can cut it as a dropped network would.
    network = {"down": False, "sockets": []}

    def route(ws):
        if network["down"]:
            ws.close(code=1013, reason="test: network down")
        else:
            network["sockets"].append((ws, ws.connect_to_server()))

    ana_context = browser.new_context(viewport=PHONE)
    ana_context.route_web_socket(re.compile(r"/ws/workshop/"), route)
    ana = ana_context.new_page()
    ana.goto(f"{base}/workshop/join/?code={code}")
    ana.fill("#join-nick", "Ana")
    ana.click("form.join-form button[type=submit]")
    bo = _participant(browser, base, code, "Bo", LAPTOP)
    for page in (console, projector, ana, bo):
        _connected(page)
    expect(projector.locator("#ws-presence")).to_have_text("2 connected")
    expect(console.locator("#ws-presence")).to_have_text("2 connected")

    # Presence: Ana's connection drops; her phone says so, the room counts one fewer.
    expect(ana.locator(".reconnecting")).to_be_hidden()
    network["down"] = True
    page_side, server_side = network["sockets"][-1]
    page_side.close(code=1012, reason="test: connection dropped")  # htmx retries on 1012
    server_side.close()  # and the server sees the socket go, as it would
    expect(ana.locator(".reconnecting")).to_be_visible()
    expect(projector.locator("#ws-presence")).to_have_text("1 connected")
    network["down"] = False
    expect(ana.locator(".reconnecting")).to_be_hidden(timeout=10_000)
    expect(projector.locator("#ws-presence")).to_have_text("2 connected")

    # A timed vote: the projector shows the claim and the count, never the answer before
    # the reveal; at zero the phones put their buttons away.
    console.click("form.drive button[data-tier=prompt]")
    title = console.locator("#drive-q option").first.inner_text()
    expect(projector.locator("#ws-stage h2")).to_have_text(title)
    console.locator("#ws-claims button[data-claim]").first.click()
    claim = projector.locator("#ws-claim")
    expect(claim).to_have_attribute("data-state", "open")
    console.fill("#claim-seconds", "5")
    console.click("button.timer-btn")
    expect(projector.locator("#ws-claimtimer")).to_contain_text("Votes close in")
    expect(bo.locator("#ws-claimtimer")).to_contain_text("Votes close in")
    ana.click("button.vote.holds")
    expect(ana.locator("#ws-myvote")).to_contain_text("Holds up")
    expect(projector.locator("#ws-answered")).to_have_text("answered 1 of 2 present")
    expect(console.locator("#ws-answered")).to_have_text("answered 1 of 2 present")
    expect(projector.locator("main")).not_to_contain_text(re.compile("holds up", re.I))
    expect(projector.locator("main")).not_to_contain_text(re.compile("costs you", re.I))
    _above_the_fold(projector, "#ws-stage h2")
    _above_the_fold(projector, "#ws-claim .claim-text")
    _above_the_fold(projector, ".screen-join .code")
    size = projector.locator("#ws-claim .claim-text").evaluate(
        "e => parseFloat(getComputedStyle(e).fontSize)"
    )
    assert size >= 28, f"the claim is {size}px on the projector"
    ARTIFACTS.mkdir(exist_ok=True)
    projector.screenshot(path=str(ARTIFACTS / "workshop-projector.png"))
    assert serious_violations(projector) == []
    for page in (projector, bo, console):
        expect(page.locator("#ws-claimtimer")).to_have_text(
            "Time is up: votes are closed.", timeout=10_000
        )
    expect(bo.locator(".vote-buttons")).to_be_hidden()
    console.click("button.reveal-btn")
    expect(claim).to_have_attribute("data-state", "revealed")
    expect(claim.locator(".verdict")).to_contain_text("The answer:")
    expect(claim).to_contain_text("Holds up: 1 (100%)")

    # An answer round: everyone writes first, the tiers come after, a few answers go up
    # on the projector without names.
    console.fill("#answers-seconds", "6")
    console.click("button.answers-start")
    for page in (ana, bo):
        expect(page.locator("#ws-answers")).to_have_attribute("data-state", "open")
    ana.fill("#answer-text", "Make the handler idempotent")
    ana.click("form.answer-form button[type=submit]")
    bo.fill("#answer-text", "<i>retry</i> with backoff")
    bo.click("form.answer-form button[type=submit]")
    for page in (ana, bo):
        expect(page.locator("#ws-myanswer")).to_contain_text("Your answer is in")
    expect(projector.locator("#ws-answercount")).to_have_text("2 answers in")
    assert serious_violations(ana) == []
    expect(projector.locator("#ws-stage")).to_have_attribute("data-tier", "prompt")
    assert projector.locator(".tier-answer").count() == 0
    expect(ana.locator("#ws-answertimer")).to_have_text(
        "Time is up: answers are closed.", timeout=10_000
    )
    expect(ana.locator("form.answer-form")).to_be_hidden()
    console.click("button.answers-end")
    for page in (projector, ana, bo):
        expect(page.locator("#ws-stage")).to_have_attribute("data-tier", "basics")
    expect(projector.locator(".tier-answer")).to_be_visible()
    console.locator("button.answer-show").nth(1).click()
    shown = projector.locator(".shown-answer")
    expect(shown).to_have_text(["<i>retry</i> with backoff"])
    assert projector.locator(".shown-answer i").count() == 0  # shown as text, escaped
    console.locator("button.answer-show").nth(0).click()
    expect(shown).to_have_count(2)
    # The answers are the newest thing: the finished claim steps aside for them.
    expect(claim).to_be_hidden()
    _above_the_fold(projector, ".shown-answer")
    for name in ("Ana", "Bo"):
        expect(projector.locator("#ws-answers")).not_to_contain_text(re.compile(rf"\b{name}\b"))
    projector.screenshot(path=str(ARTIFACTS / "workshop-projector-answers.png"))

    for page in (ana, bo):
        page.context.close()
    console.context.close()

"""The projector as a screen for a room, measured in Chromium at 1920×1080 (and 1280×720):
a full-size QR code in the lobby, "joins closed" when the room is locked, the answer and the
results in the largest type, and every moment on one screen, a long tier included."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.workshop.test_browser import _connected, _instructor

pytestmark = pytest.mark.browser

FULL_HD = {"width": 1920, "height": 1080}
HD = {"width": 1280, "height": 720}


def _projector(browser: Browser, base: str, console: Page, viewport: dict) -> Page:
    """The instructor's projector view, in a window of its own (as in the room)."""
    url = console.locator("a.open-screen").get_attribute("href")
    page = browser.new_context(
        viewport=viewport, storage_state=console.context.storage_state()
    ).new_page()
    page.goto(f"{base}{url}")
    _connected(page)
    return page


def _box(page: Page, selector: str) -> dict:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not drawn"
    return box


def test_the_lobby_qr_code_fills_its_box_and_locking_joins_says_joins_closed(
    browser, live_server_url
):
    console = _instructor(browser, live_server_url)
    screen = _projector(browser, live_server_url, console, FULL_HD)
    qr = _box(screen, ".screen-join .qr-figure svg")
    panel = _box(screen, ".screen-join")
    assert qr["width"] >= 0.8 * panel["width"], (qr, panel)
    # The drawing scales with the element (a viewBox), not a 222 px picture in its corner.
    drawn = screen.locator(".screen-join .qr-figure svg path").last.bounding_box()
    assert drawn is not None and drawn["width"] >= 0.8 * qr["width"], (drawn, qr)

    # Locked, the room takes nobody new: the projector says so at once, without the code.
    console.click("button.lock-btn")
    expect(screen.locator(".screen-join .join-state")).to_have_text("Joins closed")
    expect(screen.locator(".screen-join .qr-figure")).to_be_hidden()
    expect(screen.locator(".screen-join .join-page")).to_be_hidden()
    console.click("button.lock-btn")
    expect(screen.locator(".screen-join .join-state")).to_be_hidden()
    expect(screen.locator(".screen-join .qr-figure")).to_be_visible()
    screen.context.close()
    console.context.close()

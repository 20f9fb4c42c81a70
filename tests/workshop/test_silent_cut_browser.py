"""A participant's phone behind a real TCP proxy that cuts traffic as a Wi-Fi drop does (no
FIN, bytes just stop: tests/support/cutproxy.py), in Chromium against the live server. The
console, on the server directly, watches the room's count."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, expect

from tests.stack import manage
from tests.support.cutproxy import CutProxy
from tests.workshop.test_browser import PHONE, _connected, _instructor
from tests.workshop.test_projector_browser import _participant

pytestmark = pytest.mark.browser

VOTES = (
    "from teachlab.workshop.models import Vote; "
    "print(*Vote.objects.filter(round__room__code={code!r}).values_list('choice', flat=True))"
)


@pytest.fixture
def cut_proxy(live_server_url):
    proxy = CutProxy(int(live_server_url.rsplit(":", 1)[1])).start()
    yield proxy
    proxy.stop()


def _csp_errors(page: Page) -> list[str]:
    errors: list[str] = []
    page.on(
        "console",
        lambda msg: errors.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    return errors


def test_a_silent_cut_shows_reconnecting_within_5_s_drops_the_seat_within_10_s_and_keeps_a_vote(
    browser, live_server_url, cut_proxy
):
    console = _instructor(browser, live_server_url)
    code = console.locator(".present-head .code").inner_text().strip()
    phone = _participant(browser, cut_proxy.url, code, "Ana", PHONE)
    csp = _csp_errors(phone)
    for page in (console, phone):
        _connected(page)
    presence = console.locator("#ws-presence")
    expect(presence).to_have_text("1 connected")
    sign = phone.locator(".reconnecting")
    expect(sign).to_be_hidden()
    console.click("form.drive button[data-tier=prompt]")
    console.locator("#ws-claims button[data-claim]").first.click()
    expect(phone.locator("#ws-claim")).to_have_attribute("data-state", "open")
    phone.wait_for_timeout(2000)  # a beat or two: the server holds the socket to its beat

    cut_proxy.cut()
    cut = time.monotonic()
    # A vote tapped before the page can know: it goes into the cut socket and is lost there.
    phone.click("button.vote.holds")
    note = phone.locator(".pending-note")
    expect(sign).to_be_visible(timeout=5_000)
    shown = time.monotonic() - cut
    expect(presence).to_have_text("0 connected", timeout=10_000 - 1000 * shown)
    dropped = time.monotonic() - cut
    print(f"silent cut: sign after {shown:.2f} s, console dropped the seat after {dropped:.2f} s")
    assert shown < 5 and dropped < 10
    expect(note).to_have_text(
        "Not sent yet: your vote (Holds up). It is sent as soon as the connection is back."
    )
    phone.wait_for_timeout(3000)  # reconnect attempts during the cut get nowhere
    expect(sign).to_be_visible()
    expect(note).to_be_visible()

    cut_proxy.restore()
    back = time.monotonic()
    expect(sign).to_be_hidden(timeout=10_000)
    expect(presence).to_have_text("1 connected", timeout=10_000)
    print(f"restored: sign gone and counted again after {time.monotonic() - back:.2f} s")
    expect(note).to_have_text("Sent after reconnecting: your vote (Holds up).")
    expect(phone.locator("#ws-myvote")).to_contain_text("Your vote: Holds up")
    expect(console.locator("#ws-answered")).to_contain_text("answered 1 of 1 present")
    print(f"restored: the vote confirmed after {time.monotonic() - back:.2f} s")
    recorded = manage("shell", "-v", "0", "-c", VOTES.format(code=code)).stdout.split()
    assert recorded == ["holds"], recorded  # delivered once, not lost
    assert cut_proxy.thrown > 0  # the pings of the cut really went nowhere
    assert csp == []

"""The main pages work in Chromium under the Content-Security-Policy, served in production mode
(TEACHLAB_DEBUG=0, plain HTTP as on a room network): htmx swaps, the lab's live page and the
workshop presenter run without a single CSP violation."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.stack import manage
from tests.support.servers import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STAFF = ("csp-staff", "csp-staff-pass-123")
# Every violation, as the browser reports it to the page, from before any script of ours runs.
CATCH_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + e.sourceFile + ":" + e.lineNumber);
});
"""


@pytest.fixture(scope="module")
def production_url():
    server = LiveServer(
        TEACHLAB_DEBUG="0", TEACHLAB_ALLOWED_HOSTS="127.0.0.1", TEACHLAB_LOCAL_CONTROLS="0"
    ).start()
    manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model as g; U = g(); "
        f"U.objects.filter(username='{STAFF[0]}').exists() or "
        f"U.objects.create_user('{STAFF[0]}', password='{STAFF[1]}', is_staff=True)",
    )
    yield server.url
    server.stop()


def watch(page):
    """Gather the page's CSP violations (events and console messages) from its first load."""
    errors: list[str] = []
    page.add_init_script(CATCH_VIOLATIONS)
    page.on(
        "console",
        lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None,
    )
    page.csp_console = errors
    return page


@pytest.fixture
def watched(page):
    return watch(page)


def assert_no_violations(page, where: str) -> None:
    found = page.evaluate("window.__csp") + page.csp_console
    assert not found, f"CSP violations on {where}: {found}"


def test_the_main_pages_work_under_the_policy_with_no_violation(watched, production_url, browser):
    page, base = watched, production_url
    response = page.goto(f"{base}/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    assert_no_violations(page, "the index")

    # A question: the answer timer (lesson.js) and a tier revealed through htmx.
    page.locator("a[href^='/q/']").first.click()
    page.get_by_role("button", name="Answer out loud (20 s)").click()
    expect(page.locator("#answer-timer")).to_contain_text("left of 20 s")
    page.get_by_role("link", name="Reveal basics").click()
    expect(page.locator("#tier-basics .prose").first).to_be_visible()
    assert_no_violations(page, "a question page")

    # The quiz: one answer through htmx, its feedback swapped in.
    page.goto(f"{base}/quiz/")
    page.get_by_role("button", name="Start a mixed quiz").click()
    page.locator(".quiz-item button[value='holds']").first.click()
    expect(page.locator(".quiz-feedback").first).to_be_visible()
    assert_no_violations(page, "the quiz")

    # The lab: fire a run and open its live page (timeline axis, socket, countdowns).
    page.goto(f"{base}/lab/")
    page.get_by_label("Countdown").fill("5")
    page.get_by_role("button", name="Fire").click()
    page.wait_for_url("**/lab/runs/**")
    expect(page.locator(".tl-axis span").first).to_be_visible()
    page.wait_for_timeout(1500)  # the socket opens and the clock ticks
    widths = page.locator(".tl-axis span").evaluate_all(
        "spans => spans.map(s => getComputedStyle(s).getPropertyValue('--at').trim())"
    )
    assert widths[:2] == ["0", widths[1]] and widths[1] != "", widths  # data-css applied
    assert_no_violations(page, "the lab's run page")

    # The workshop: index, then a staff member's presenter screen (QR code, live socket).
    page.goto(f"{base}/workshop/")
    assert_no_violations(page, "the workshop index")
    page.goto(f"{base}/accounts/login/?next=/workshop/")
    page.get_by_label("Username").fill(STAFF[0])
    page.get_by_label("Password").fill(STAFF[1])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/workshop/")
    page.get_by_label("Room title").fill("CSP room")
    page.get_by_role("button", name="Create a room").click()
    page.wait_for_url("**/present/**")
    expect(page.locator(".qr-figure svg")).to_be_visible()
    code = page.locator(".present-head .code").inner_text().strip()

    # A participant votes on a claim; the reveal draws the tally bars (data-css) on both.
    phone = watch(browser.new_context().new_page())
    phone.goto(f"{base}/workshop/")
    phone.fill("#join-code", code)
    phone.fill("#join-nick", "Ana")
    phone.click("form.join-form button[type=submit]")
    expect(phone.locator(".who .nick")).to_have_text("Ana")
    expect(page.locator("#ws-seats summary")).to_contain_text("1 joined")
    page.click("form.drive button[data-tier=solid]")
    expect(phone.locator("#ws-stage")).to_have_attribute("data-tier", "solid")
    page.locator("#ws-claims button[data-claim]").first.click()
    expect(phone.locator("#ws-claim")).to_have_attribute("data-state", "open")
    phone.click("button.vote.holds")
    expect(page.locator("#ws-answered")).to_contain_text("answered 1 of 1 present")
    page.click("button.reveal-btn")
    for screen in (page, phone):
        bar = screen.locator("#ws-claim .bar.holds")
        expect(bar).to_be_visible()
        assert bar.evaluate("b => getComputedStyle(b).getPropertyValue('--pct').trim()") == "100"
    assert_no_violations(phone, "a participant's screen")
    assert_no_violations(page, "the presenter screen")
    phone.context.close()


def test_the_workers_panel_holds_its_refresh_while_focus_is_inside_it(watched, production_url):
    """hold-while-focused.js stands in for the htmx trigger filter the CSP refuses: the panel
    polls every 3 s, but not while a control inside it has keyboard focus."""
    page, base = watched, production_url
    page.goto(f"{base}/accounts/login/?next=/lab/")
    page.get_by_label("Username").fill(STAFF[0])
    page.get_by_label("Password").fill(STAFF[1])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/lab/")
    panel = page.locator("#workers[data-hold-while-focused]")
    expect(panel).to_have_count(1)
    mark = "() => { const w = document.getElementById('workers'); w.dataset.mark = 'same';"
    mark += " const b = document.createElement('button'); b.id = 'probe'; b.textContent = 'x';"
    mark += " w.append(b); b.focus(); }"
    page.evaluate(mark)
    page.wait_for_timeout(4500)  # one refresh and a half
    assert page.locator("#workers[data-mark=same] #probe").count() == 1, "refreshed under focus"
    page.evaluate("document.getElementById('probe').blur()")
    expect(page.locator("#workers[data-mark=same]")).to_have_count(0, timeout=8_000)
    expect(page.locator("#workers")).to_have_count(1)
    assert_no_violations(page, "the lab with its workers panel")

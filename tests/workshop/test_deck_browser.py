"""A prepared plan run like a deck, on five screens at once in Chromium (issue 28): the
console on a 1366x768 laptop, the projector at 1920x1080 (and measured again at 1280x720),
two phones at 390x844 and a participant on a laptop. The instructor steps from the lobby to
the podium with a presentation clicker's keys (PageDown, ArrowRight, PageUp) and the
cockpit's R, T, L and B; at every step the current interaction is fully inside the
viewport of the projector at both sizes and of a phone, and the console's live part fits
1366x768 without scrolling."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.conftest import ARTIFACTS
from tests.stack import manage
from tests.test_csp_browser import assert_no_violations, watch
from tests.workshop.test_browser import PASSWORD, _connected, _participant, _staff_user

pytestmark = pytest.mark.browser

CONSOLE = {"width": 1366, "height": 768}
FULL_HD = {"width": 1920, "height": 1080}
HD = {"width": 1280, "height": 720}
LAPTOP = {"width": 1280, "height": 800}

# What the projector shows at each moment (#ws-moment, roundstate.moment).
SLIDE = {
    "lobby": [".screen-join .code", ".screen-join .qr-figure svg", "#ws-joined"],
    "tier": ["#ws-stage", "#ws-stagebody"],
    "claim": ["#ws-stage", "#ws-claim"],
    "answers": ["#ws-stage", "#ws-answers"],
    "run": ["#ws-stage", "#ws-run"],
    "leaderboard": ["#ws-board"],
    "podium": ["#ws-board"],
}
# What a phone must have in view: the thing to act on, or what the room is on.
PHONE_VIEW = {
    "tier": ["#ws-stage h2"],
    "claim": ["#ws-claim .vote-buttons", "#ws-claim .claim-text"],
    "answers": ["#ws-answers .answer-form"],
    "run": ["#ws-run .predict"],
    "leaderboard": ["#ws-leaderboard h2"],
    "podium": ["#ws-leaderboard h2"],
}

PLAN_SCRIPT = """
from django.contrib.auth import get_user_model
from teachlab.workshop import content
from teachlab.workshop.models import Plan
qs = [q for q in content.questions() if q.claims]
q = max(qs, key=lambda q: len(q.tiers.get("senior", "")))
steps = [
    {"kind": "tier", "question": q.slug, "tier": "prompt"},
    {"kind": "claim", "claim": q.claims[0].key},
    {"kind": "tier", "question": q.slug, "tier": "senior"},
    {"kind": "answers", "question": q.slug},
    {"kind": "run", "lane": "redis-short", "params": {"count": 3, "countdown": 5.0},
     "metric": "receipts", "prompt": "How many receipts?"},
    {"kind": "leaderboard"},
]
owner = get_user_model().objects.get(username="decker")
plan = Plan.objects.create(owner=owner, title="Deck class", steps=steps)
print(plan.pk)
"""


def _inside(page: Page, selector: str, where: str) -> None:
    """The element is drawn and wholly inside the page's viewport, the page not scrolled
    sideways."""
    loc = page.locator(selector).first
    expect(loc).to_be_visible()
    box = loc.bounding_box()
    size = page.viewport_size
    assert box is not None, f"{where}: {selector} is not drawn"
    assert box["x"] >= -1 and box["y"] >= -1, f"{where}: {selector} starts off screen {box}"
    assert box["x"] + box["width"] <= size["width"] + 1, f"{where}: {selector} too wide {box}"
    assert box["y"] + box["height"] <= size["height"] + 1, (
        f"{where}: {selector} ends below the screen {box} in {size}"
    )


def _no_scroll(page: Page, where: str) -> None:
    scroll = page.evaluate(
        "[document.documentElement.scrollHeight, innerHeight,"
        " document.documentElement.scrollWidth, innerWidth]"
    )
    assert scroll[0] <= scroll[1] + 1 and scroll[2] <= scroll[3] + 1, f"{where}: {scroll}"


def _projector_fits(projector: Page, moment: str, step: str) -> None:
    for size in (FULL_HD, HD):
        projector.set_viewport_size(size)
        expect(projector.locator("#ws-moment")).to_have_attribute("data-moment", moment)
        projector.wait_for_timeout(250)  # static/js/fit-slide.js scales on the next frame
        where = f"projector {size['width']}x{size['height']} at {step}"
        _no_scroll(projector, where)
        for selector in SLIDE[moment]:
            _inside(projector, selector, where)
    projector.set_viewport_size(FULL_HD)


def _console_fits(console: Page, step: str) -> None:
    where = f"console at {step}"
    assert console.evaluate("scrollY") == 0, where
    _inside(console, ".cockpit", where)
    _inside(console, "#ws-now", where)
    _inside(console, "[data-plan-step=next]", where)
    _inside(console, "#ws-people", where)


def _phone_fits(phone: Page, moment: str, step: str) -> None:
    phone.wait_for_timeout(400)  # follow-current.js scrolls smoothly
    for selector in PHONE_VIEW.get(moment, []):
        _inside(phone, selector, f"phone at {step}")


def _font_px(page: Page, selector: str) -> float:
    return page.locator(selector).first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")


def _step(console: Page, key: str, moment: str, screens: list[Page]) -> None:
    console.keyboard.press(key)
    for page in screens:
        expect(page.locator("#ws-moment")).to_have_attribute("data-moment", moment)
    expect(console.locator("#ws-now")).to_have_attribute("data-moment", moment)


def _console(browser: Browser, base: str) -> Page:
    _staff_user("decker")
    pk = manage("shell", "-c", PLAN_SCRIPT).stdout.strip().splitlines()[-1]
    page = watch(browser.new_context(viewport=CONSOLE).new_page())
    page.goto(f"{base}/accounts/login/?next=/workshop/plans/{pk}/")
    page.fill("#id_username", "decker")
    page.fill("#id_password", PASSWORD)
    page.click("form.auth-form button[type=submit]")
    page.click("text=Start a room from this plan")
    expect(page).to_have_url(re.compile(r"/workshop/r/[A-Z0-9]+/present/$"))
    return page


def test_a_prepared_plan_runs_on_five_screens_with_the_clicker_from_the_lobby_to_the_podium(
    browser, live_server_url
):
    base = live_server_url
    console = _console(browser, base)
    code = console.locator(".present-head .code").inner_text().strip()
    url = console.locator("#ws-now a.open-screen").get_attribute("href")
    projector = watch(
        browser.new_context(
            viewport=FULL_HD, storage_state=console.context.storage_state()
        ).new_page()
    )
    projector.goto(f"{base}{url}")
    _connected(projector)
    _connected(console)

    # The lobby: the join code, a full-size QR code and the names popping in as people join.
    _projector_fits(projector, "lobby", "the lobby")
    ana = _participant(browser, base, code, "Ana")
    # Count the phone's buzzes (navigator.vibrate, where the device has it).
    ana.add_init_script(
        "navigator.vibrate = () => { window.buzzed = (window.buzzed || 0) + 1; return true; };"
    )
    ana.reload()
    bo = _participant(browser, base, code, "Bo")
    cy = _participant(browser, base, code, "Cy")
    cy.set_viewport_size(LAPTOP)  # a participant on a laptop
    phones = [ana, bo]
    people = [ana, bo, cy]
    for page in people:
        _connected(page)
    expect(projector.locator("#ws-joined li")).to_have_text(["Ana", "Bo", "Cy"])
    _projector_fits(projector, "lobby", "the lobby, three joined")
    _console_fits(console, "the lobby")
    expect(console.locator("#ws-people .person.here")).to_have_count(3)
    screens = [projector, *people]

    # 1: the question (PageDown, as a clicker sends).
    _step(console, "PageDown", "tier", screens)
    _projector_fits(projector, "tier", "step 1")
    _phone_fits(ana, "tier", "step 1")
    _console_fits(console, "step 1")

    # 2: a claim vote (ArrowRight). Phones buzz and show the vote at the top; the console
    # marks who answered; T starts the vote timer, R reveals.
    _step(console, "ArrowRight", "claim", screens)
    for phone in phones:
        _phone_fits(phone, "claim", "step 2")
    assert ana.evaluate("window.buzzed || 0") >= 1
    _projector_fits(projector, "claim", "step 2")
    _console_fits(console, "step 2")
    ana.click("button.vote.holds")
    bo.click("button.vote.costs")
    expect(console.locator("#ws-people .person.answered")).to_have_count(2)
    expect(console.locator("#ws-people .people-answered")).to_have_text("2 of 3 answered")
    cy.click("button.vote.holds")
    expect(console.locator("#ws-people .person.answered")).to_have_count(3)
    console.locator("#claim-seconds").press("r")  # typing in a field is not a key press
    expect(projector.locator("#ws-claim")).to_have_attribute("data-state", "open")
    console.locator("body").click(position={"x": 2, "y": 2})
    console.keyboard.press("t")
    expect(projector.locator("#ws-claimtimer")).to_contain_text("Votes close in")
    console.keyboard.press("r")
    expect(projector.locator("#ws-claim")).to_have_attribute("data-state", "revealed")
    expect(console.locator("#ws-quick .reveal-btn")).to_have_count(0)  # applies no more
    _projector_fits(projector, "claim", "step 2 revealed")
    # The answer and the split are the largest things on the slide.
    verdict = _font_px(projector, "#ws-claim .verdict")
    assert verdict >= _font_px(projector, "#ws-stage .screen-title"), verdict
    assert _font_px(projector, "#ws-claim .split .bar") >= _font_px(projector, "#ws-claim .why")
    _console_fits(console, "step 2 revealed")
    console.screenshot(path=str(ARTIFACTS / "workshop-cockpit.png"))
    projector.screenshot(path=str(ARTIFACTS / "workshop-slide-reveal.png"))

    # 3: a long senior tier: the slide scales to one screen; the phones drop the claim.
    _step(console, "PageDown", "tier", screens)
    _projector_fits(projector, "tier", "step 3 (senior)")
    projector.screenshot(path=str(ARTIFACTS / "workshop-slide-long-tier.png"))
    for phone in phones:
        expect(phone.locator("#ws-claim")).to_be_hidden()
        _phone_fits(phone, "tier", "step 3")
    _console_fits(console, "step 3")
    # L puts the leaderboard up and takes it down; B blanks the projector and brings it back.
    console.keyboard.press("l")
    expect(projector.locator("#ws-moment")).to_have_attribute("data-moment", "leaderboard")
    _projector_fits(projector, "leaderboard", "L")
    console.keyboard.press("l")
    expect(projector.locator("#ws-moment")).to_have_attribute("data-moment", "tier")
    console.keyboard.press("b")
    expect(projector.locator("#ws-moment")).to_have_attribute("data-moment", "blank")
    expect(projector.locator("#ws-stage")).not_to_be_visible()
    expect(console.locator("#ws-now")).to_have_attribute("data-moment", "blank")
    console.keyboard.press("b")
    expect(projector.locator("#ws-moment")).to_have_attribute("data-moment", "tier")
    expect(projector.locator("#ws-stage")).to_be_visible()

    # 4: an answer round: the answers arrive live on the console, never on the projector.
    _step(console, "PageDown", "answers", screens)
    for phone in phones:
        _phone_fits(phone, "answers", "step 4")
    _projector_fits(projector, "answers", "step 4")
    ana.fill("#answer-text", "Make the handler idempotent")
    ana.click("form.answer-form button[type=submit]")
    expect(console.locator("#ws-answers .live-answers li")).to_have_text(
        ["Make the handler idempotent"]
    )
    expect(projector.locator("#ws-answers")).not_to_contain_text("idempotent")
    _console_fits(console, "step 4")

    # 5: predictions for a shared run.
    _step(console, "PageDown", "run", screens)
    for phone in phones:
        _phone_fits(phone, "run", "step 5")
    _projector_fits(projector, "run", "step 5")
    _console_fits(console, "step 5")

    # 6: the leaderboard between rounds, its table at least 24 px on either screen size.
    _step(console, "PageDown", "leaderboard", screens)
    _projector_fits(projector, "leaderboard", "step 6")
    for size in (FULL_HD, HD):
        projector.set_viewport_size(size)
        assert _font_px(projector, "#ws-board td") >= 24
    projector.set_viewport_size(FULL_HD)
    expect(projector.locator("#ws-board td.c-name").first).to_have_text(re.compile("Ana|Cy|Bo"))
    _phone_fits(ana, "leaderboard", "step 6")
    _console_fits(console, "step 6")

    # Past the last step: the podium. PageUp goes back, PageDown forward again.
    _step(console, "PageDown", "podium", screens)
    expect(projector.locator("#ws-board .podium li")).to_have_count(3)
    _projector_fits(projector, "podium", "the podium")
    _step(console, "PageUp", "leaderboard", screens)
    _step(console, "PageDown", "podium", screens)
    expect(console.locator("[data-plan-step=next]")).to_be_disabled()
    _console_fits(console, "the podium")

    assert_no_violations(console, "the console run as a deck")
    assert_no_violations(projector, "the projector run as a deck")
    for page in (console, projector, *people):
        page.context.close()


def test_keys_pressed_in_quick_succession_each_act_through_htmx(browser, live_server_url):
    """A key pressed while the previous press of that button was still on its way went into
    htmx's queue for the old button, which the response then replaced: the press was dropped.
    Now the key waits for that request and presses the redrawn button. A fast second key (T
    then R) once hit the freshly swapped Reveal form before htmx had
    processed it (its settle step waited 20 ms): the browser submitted it natively, without
    a CSRF token, and the reveal never happened (CI at dcfd197). Now swapped content is
    processed in the same task, so a key in the very next task still acts through htmx."""
    console = _console(browser, live_server_url)
    _connected(console)
    # Two clicker presses in a row: the second comes while the first is on its way, and
    # still counts once the first has redrawn its button.
    console.keyboard.press("PageDown")
    _step(console, "ArrowRight", "claim", [])
    expect(console.locator("#ws-quick .reveal-btn")).to_have_count(1)
    console.evaluate(
        """() => {
        window.samePage = true;
        const pressR = (e) => {
            if (!(e.detail.pathInfo || {}).requestPath?.endsWith('/timer/')) return;
            document.body.removeEventListener('htmx:afterSwap', pressR);
            setTimeout(() => document.dispatchEvent(
                new KeyboardEvent('keydown', {key: 'r', bubbles: true})));
        };
        document.body.addEventListener('htmx:afterSwap', pressR);
        }"""
    )
    console.locator("body").click(position={"x": 2, "y": 2})
    console.keyboard.press("t")
    expect(console.locator("#ws-quick .reveal-btn")).to_have_count(0)
    expect(console.locator("#ws-now")).to_have_attribute("data-moment", "claim")
    assert console.evaluate("window.samePage === true"), "the form was submitted natively"

"""A learner walks one question in Chromium: opens it, answers against the clock, reveals
each tier through htmx, follows a tier permalink, and uses the keyboard shortcuts."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.browser

BASICS_TEXT = "A worker pulls the message almost at"
SOLID_TEXT = "The worker reserves the message immediately"
SENIOR_TEXT = "The options side by side"


def test_walk_one_question_from_prompt_to_senior_tier(page, fixture_lessons_url):
    base = fixture_lessons_url
    page.goto(f"{base}/")
    # The home page also lists it on the course path; this walk starts from the index.
    page.locator(".question-list").get_by_role(
        "link", name="Where does a countdown task wait?"
    ).click()

    expect(page.get_by_role("heading", level=1)).to_have_text("Where does a countdown task wait?")
    expect(page.get_by_text("Where is that message during the hour")).to_be_visible()
    expect(page.get_by_text(BASICS_TEXT)).to_have_count(0)
    page.evaluate("window.__samePage = true")  # survives only if nothing reloads the page

    # Answer out loud: a 20 s clock that visibly counts down and fills its bar
    page.get_by_role("button", name="Answer out loud (20 s)").click()
    timer = page.locator("#answer-timer")
    expect(timer).to_be_visible()
    expect(timer).to_contain_text("left of 20 s")
    page.wait_for_timeout(1600)
    seconds_left = int(page.locator(".timer-left").inner_text())
    assert seconds_left < 20
    assert page.locator(".timer-bar").evaluate("bar => bar.value") > 1

    # basics by click, solid by the `r` shortcut, senior by click again
    page.get_by_role("link", name="Reveal basics").click()
    expect(page.locator("#tier-basics")).to_contain_text(BASICS_TEXT)
    expect(page).to_have_url(f"{base}/q/fixture-countdown/basics/")
    expect(page.locator("#tier-basics-heading")).to_be_focused()
    expect(page.get_by_role("button", name="Answer out loud (40 s)")).to_be_visible()

    page.keyboard.press("r")
    expect(page.locator("#tier-solid")).to_contain_text(SOLID_TEXT)
    expect(page).to_have_url(f"{base}/q/fixture-countdown/solid/")

    page.keyboard.press("t")
    expect(page.locator("#answer-timer")).to_contain_text("left of 120 s")

    page.get_by_role("link", name="Reveal senior").click()
    expect(page.locator("#tier-senior table:not(.verified-on-short)")).to_be_visible()
    expect(page.get_by_text("All three tiers are open")).to_be_visible()
    expect(page.locator("#tier-senior-heading")).to_be_focused()  # as basics and solid do
    assert page.evaluate("window.__samePage") is True, "a reveal reloaded the whole page"

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "question-walk.png"), full_page=True)

    # the permalink of a tier opens the page with it (and the tiers before it) revealed
    page.goto(f"{base}/q/fixture-countdown/solid/")
    expect(page.locator("#tier-basics")).to_contain_text(BASICS_TEXT)
    expect(page.locator("#tier-solid")).to_contain_text(SOLID_TEXT)
    expect(page.locator("#tier-senior")).to_have_count(0)
    expect(page.get_by_role("link", name="Reveal senior")).to_be_visible()

    # the index now shows what this learner revealed
    page.goto(f"{base}/")
    card = page.locator(".question-card").first
    expect(card.locator(".tier-chip.is-revealed")).to_have_count(3)


def test_shortcuts_move_between_questions(page, fixture_lessons_url):
    page.goto(f"{fixture_lessons_url}/q/fixture-countdown/")
    page.keyboard.press("n")
    expect(page).to_have_url(f"{fixture_lessons_url}/q/fixture-acks-late/")
    page.keyboard.press("p")
    expect(page).to_have_url(f"{fixture_lessons_url}/q/fixture-countdown/")


def test_question_fits_a_phone_screen_with_every_tier_open(browser, fixture_lessons_url):
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    page = context.new_page()
    try:
        page.goto(f"{fixture_lessons_url}/q/fixture-countdown/senior/")
        expect(page.locator("#tier-senior table:not(.verified-on-short)")).to_be_attached()
        page_width = page.evaluate("document.documentElement.scrollWidth")
        assert page_width <= 375, f"page is {page_width}px wide on a 375px screen"
        reveal_done = page.get_by_text("All three tiers are open")
        expect(reveal_done).to_be_visible()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "question-phone.png"), full_page=True)
        page.goto(f"{fixture_lessons_url}/")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
    finally:
        context.close()


def test_printing_shows_revealed_answers_without_controls(page, fixture_lessons_url):
    page.goto(f"{fixture_lessons_url}/q/fixture-countdown/solid/")
    page.emulate_media(media="print")

    expect(page.locator("#tier-basics")).to_be_visible()
    expect(page.locator("#tier-solid")).to_be_visible()
    expect(page.locator(".site-header")).to_be_hidden()
    expect(page.locator("#reveal")).to_be_hidden()
    expect(page.locator(".shortcuts")).to_be_hidden()
    pdf = page.pdf(format="A4")
    assert pdf[:4] == b"%PDF"


def test_back_button_after_a_reveal_returns_to_the_whole_page(page, fixture_lessons_url):
    page.goto(f"{fixture_lessons_url}/q/fixture-acks-late/")
    page.get_by_role("link", name="Reveal basics").click()
    expect(page).to_have_url(f"{fixture_lessons_url}/q/fixture-acks-late/basics/")

    page.go_back()

    expect(page).to_have_url(f"{fixture_lessons_url}/q/fixture-acks-late/")
    expect(page.get_by_role("heading", level=1)).to_have_text("When does acks_late help?")
    expect(page.get_by_role("link", name="Reveal basics")).to_be_visible()

    page.reload()
    expect(page.get_by_role("heading", level=1)).to_have_text("When does acks_late help?")


def test_rating_an_earlier_tier_leaves_the_running_timer_and_focus_alone(page, fixture_lessons_url):
    page.goto(f"{fixture_lessons_url}/q/fixture-countdown/solid/")
    page.get_by_role("button", name="Answer out loud (120 s)").click()
    basics_rating = page.locator("#self-rating-basics")
    basics_rating.get_by_role("button", name="Nailed it").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#self-rating-basics")).to_contain_text("Saved: nailed it")

    # the clock for the senior answer keeps running, and nothing claims a tier was revealed
    seconds_left = int(page.locator(".timer-left").inner_text())
    page.wait_for_timeout(1500)
    assert int(page.locator(".timer-left").inner_text()) < seconds_left
    expect(page.locator("#tier-solid-heading")).not_to_be_focused()
    expect(page.locator("#lesson-status")).not_to_contain_text("revealed")


def test_a_rating_that_fails_says_so_under_the_tier(page, fixture_lessons_url):
    page.goto(f"{fixture_lessons_url}/q/fixture-countdown/basics/")
    page.route("**/rate/", lambda route: route.fulfill(status=403, body="CSRF verification failed"))

    page.locator("#self-rating-basics").get_by_role("button", name="Missed it").click()

    expect(page.locator("#self-rating-basics .rating-status")).to_contain_text("not saved")


def test_a_reveal_whose_htmx_request_fails_opens_the_tier_permalink(page, fixture_lessons_url):
    page.goto(f"{fixture_lessons_url}/q/fixture-countdown/")

    def drop_htmx(route):
        if route.request.headers.get("hx-request"):
            route.abort()
        else:
            route.continue_()

    page.route("**/q/fixture-countdown/basics/", drop_htmx)
    page.get_by_role("link", name="Reveal basics").click()

    expect(page).to_have_url(f"{fixture_lessons_url}/q/fixture-countdown/basics/")
    expect(page.locator("#tier-basics")).to_contain_text(BASICS_TEXT)


def test_a_wide_senior_table_on_a_phone_says_it_scrolls_and_keeps_its_key_column(
    browser, live_server_url
):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    try:
        page.goto(f"{live_server_url}/q/raise-visibility-timeout/senior/")
        table = page.locator("#tier-senior table").first
        assert table.evaluate("t => t.scrollWidth > t.clientWidth"), "the table fits: no test"
        expect(page.locator("#tier-senior .table-hint").first).to_be_visible()
        key = table.locator("tr").nth(1).locator("td").first
        before = key.bounding_box()["x"]
        table.evaluate("t => { t.scrollLeft = t.scrollWidth; }")
        assert table.evaluate("t => t.scrollLeft") > 0
        assert abs(key.bounding_box()["x"] - before) < 1  # the key column stays in view
    finally:
        context.close()


def test_on_a_desktop_the_table_hint_stays_out_of_the_way(page, live_server_url):
    page.goto(f"{live_server_url}/q/raise-visibility-timeout/senior/")
    expect(page.locator("#tier-senior table").first).to_be_visible()
    expect(page.locator("#tier-senior .table-hint").first).to_be_hidden()

"""Dark mode in Chromium: the system's preference is followed, the switch repaints at once and
its choice outlives a reload, the page is right without any script (so no flash of the wrong
theme), and axe-core finds nothing serious, colour contrast included, in either theme, on a
desktop and on a phone."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from lessons.catalog import all_questions
from tests.lessons.test_accessibility import open_everything, serious_violations
from tests.lessons.test_course_browser import SCREENS  # a 1366x900 laptop and a 390x844 phone

pytestmark = pytest.mark.browser

DARK_BG = "rgb(20, 22, 26)"  # --bg in static/css/dark.css
LIGHT_BG = "rgb(251, 251, 248)"  # --bg in static/css/site.css


# "How we know" opens these: a measurement note, a seed case study, a source view.
EVIDENCE = [
    "notes/1",
    "cases/payout-timeouts-at-12-hours",
    "source/kombu.transport.redis/QoS.restore_visible",
]


def background(page) -> str:
    return page.evaluate("getComputedStyle(document.body).backgroundColor")


def choose(page, theme: str) -> int:
    """Press the switch's button and wait for the save the page makes in the background."""
    with page.expect_response(re.compile(r"/settings/theme/$")) as saved:
        page.get_by_role("group", name="Theme").get_by_role("button", name=theme).click()
    return saved.value.status


def main_pages(page, base: str) -> list[str]:
    """Home, a question with every tier, the lab, its experiments and run history, the
    glossary, search, the quiz and one attempt of it, review and progress, sign-in, the
    workshop's join page and the evidence pages (a run's own page needs workers: the lab's
    browser tests scan it)."""
    slug = all_questions()[0].slug
    page.goto(f"{base}/quiz/")
    page.get_by_role("button", name=re.compile("^Quiz me on")).first.click()
    expect(page).to_have_url(re.compile(r"/quiz/a/\d+/$"))
    attempt = page.url.removeprefix(base)
    pages = ["/", f"/q/{slug}/senior/", "/lab/", "/glossary/", "/search/?q=prefetch", "/quiz/"]
    pages += [attempt, "/review/", "/progress/", "/accounts/login/", "/workshop/join/"]
    pages += ["/lab/experiments/", "/lab/experiments/countdown-beyond-timeout/", "/lab/runs/"]
    return pages + [f"/evidence/{kind}/" for kind in EVIDENCE]


@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_main_pages_scan_clean_in_the_system_theme(browser, live_server_url, scheme, screen):
    context = browser.new_context(color_scheme=scheme, **SCREENS[screen])
    page = context.new_page()
    found = {}
    try:
        for path in main_pages(page, live_server_url):
            page.goto(f"{live_server_url}{path}")
            open_everything(page)
            assert background(page) == (DARK_BG if scheme == "dark" else LIGHT_BG), path
            if problems := serious_violations(page):
                found[path] = problems
    finally:
        context.close()
    assert found == {}


def test_the_switch_repaints_at_once_and_the_choice_outlives_a_reload(browser, live_server_url):
    context = browser.new_context(color_scheme="light")
    page = context.new_page()
    try:
        page.goto(f"{live_server_url}/glossary/")
        assert background(page) == LIGHT_BG
        assert choose(page, "Dark") == 204
        switch = page.get_by_role("group", name="Theme")
        expect(page.locator("body")).to_have_css("background-color", DARK_BG)
        expect(switch.get_by_role("button", name="Dark")).to_have_attribute("aria-pressed", "true")
        expect(switch.get_by_role("button", name="System")).to_have_attribute(
            "aria-pressed", "false"
        )
        page.goto(f"{live_server_url}/")
        assert background(page) == DARK_BG
        assert page.locator("html").get_attribute("data-theme") == "dark"
    finally:
        context.close()


def test_a_chosen_light_theme_wins_over_a_dark_system(browser, live_server_url):
    context = browser.new_context(color_scheme="dark")
    page = context.new_page()
    try:
        page.goto(f"{live_server_url}/")
        assert background(page) == DARK_BG
        choose(page, "Light")
        expect(page.locator("body")).to_have_css("background-color", LIGHT_BG)
        page.reload()
        assert background(page) == LIGHT_BG
    finally:
        context.close()


def test_without_script_the_first_paint_is_already_the_chosen_theme(browser, live_server_url):
    """The theme is in the HTML as served (no script decides it), so there is nothing to
    flash; the switch still works as a plain form."""
    context = browser.new_context(color_scheme="light", java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(f"{live_server_url}/glossary/")
        page.get_by_role("group", name="Theme").get_by_role("button", name="Dark").click()
        expect(page).to_have_url(f"{live_server_url}/glossary/")
        assert background(page) == DARK_BG
    finally:
        context.close()

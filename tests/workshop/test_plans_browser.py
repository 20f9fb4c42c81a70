"""A session plan prepared in Chromium and stepped with a presentation clicker's keys: the
instructor builds it on the plan page, starts a room from it, and PageDown/PageUp on the
console move a phone through its steps (live server, daphne)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.test_csp_browser import assert_no_violations, watch
from tests.workshop.test_browser import PASSWORD, _connected, _participant, _staff_user

pytestmark = pytest.mark.browser


def _signed_in(browser: Browser, base: str) -> Page:
    _staff_user("planner")
    page = watch(browser.new_context(viewport={"width": 1366, "height": 768}).new_page())
    page.goto(f"{base}/accounts/login/?next=/workshop/plans/")
    page.fill("#id_username", "planner")
    page.fill("#id_password", PASSWORD)
    page.click("form.auth-form button[type=submit]")
    expect(page).to_have_url(re.compile(r"/workshop/plans/$"))
    return page


def _add(page: Page, kind: str, count: int) -> None:
    page.locator(f"form:has(input[name=kind][value={kind}]) button[type=submit]").click()
    expect(page.locator("#plan-steps ol.plan-steps > li")).to_have_count(count)


def test_a_plan_built_on_its_page_is_stepped_with_clicker_keys_on_the_console(
    browser, live_server_url
):
    base = live_server_url
    teacher = _signed_in(browser, base)
    teacher.fill("#plan-title", "Clicker class")
    teacher.click("form[action$='/plans/new/'] button[type=submit]")
    expect(teacher.locator("h1")).to_have_text("Clicker class")
    teacher.select_option("#tier-t", "solid")
    _add(teacher, "tier", 1)
    _add(teacher, "claim", 2)
    _add(teacher, "leaderboard", 3)
    # reorder: the leaderboard up one, then back down (htmx redraws the list each time)
    teacher.click("button[aria-label='Move step 3 up']")
    expect(teacher.locator("#plan-steps li").nth(1)).to_have_attribute("data-kind", "leaderboard")
    teacher.click("button[aria-label='Move step 2 down']")
    expect(teacher.locator("#plan-steps li").nth(2)).to_have_attribute("data-kind", "leaderboard")

    assert_no_violations(teacher, "the plan page")
    teacher.click("text=Start a room from this plan")
    expect(teacher).to_have_url(re.compile(r"/workshop/r/[A-Z0-9]+/present/$"))
    code = teacher.locator(".present-head .code").inner_text().strip()
    phone = _participant(browser, base, code, "Ana")
    _connected(teacher)
    _connected(phone)
    expect(teacher.locator("#ws-plan .plan-now")).to_contain_text("Not started")

    teacher.keyboard.press("PageDown")
    expect(phone.locator("#ws-stage")).to_have_attribute("data-tier", "solid")
    expect(teacher.locator("#ws-plan .plan-now")).to_contain_text("step 1 of 3")
    teacher.keyboard.press("ArrowRight")
    expect(phone.locator("#ws-claim")).to_have_attribute("data-state", "open")
    expect(teacher.locator("#ws-plan .plan-now")).to_contain_text("step 2 of 3")
    # typing in a field is not a clicker press
    teacher.locator("#claim-seconds").press("PageUp")
    expect(teacher.locator("#ws-plan .plan-now")).to_contain_text("step 2 of 3")
    teacher.locator("body").click(position={"x": 5, "y": 5})
    teacher.keyboard.press("PageUp")
    expect(teacher.locator("#ws-plan .plan-now")).to_contain_text("step 1 of 3")
    expect(phone.locator("#ws-stage")).to_have_attribute("data-tier", "solid")
    assert_no_violations(teacher, "the console of a planned room")

"""One walk through the course path in Chromium, on a laptop (1366×900) and a phone (390×844):
home → start here → the question → reveal a tier (focus moves to it) → quiz it → progress →
download the progress file → import it back. No console error on any page; axe finds nothing
serious on the home and progress pages."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS
from tests.lessons.test_accessibility import serious_violations

pytestmark = pytest.mark.browser

SCREENS = {
    "laptop": {"viewport": {"width": 1366, "height": 900}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}


def walk(page, base: str, screen: str) -> None:
    phone = screen == "phone"
    page.goto(f"{base}/")
    expect(page.locator("#what-this-is")).to_contain_text("teachlab prepares you")
    expect(page.locator("#due-for-review")).to_contain_text("Nothing is due today")
    assert serious_violations(page) == [], "home"
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"course-home-{screen}.png"))
    icon = page.request.get(f"{base}/favicon.ico")  # follows the redirect to the SVG
    assert icon.ok and icon.headers["content-type"].startswith("image/svg+xml")

    page.locator("#start-here-link").click()
    expect(page).to_have_url(f"{base}/q/fixture-countdown/")
    # Keyboard help is for keyboards: hidden on a touch screen.
    if phone:
        expect(page.locator(".shortcuts")).to_be_hidden()
    else:
        expect(page.locator(".shortcuts")).to_be_visible()

    page.get_by_role("link", name="Reveal basics").click()
    expect(page.locator("#tier-basics")).to_be_visible()
    expect(page.locator("#tier-basics-heading")).to_be_focused()

    next_steps = page.locator("#next-steps")
    next_steps.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"course-question-end-{screen}.png"))
    expect(next_steps.get_by_role("link", name="Try it in the lab")).to_have_attribute(
        "href", "/lab/"
    )
    next_steps.get_by_role("button", name="Quiz this question").click()
    expect(page).to_have_url(re.compile(r"/quiz/a/\d+/$"))
    first = page.locator("li.quiz-item").first
    first.get_by_role("button", name="Holds up").click()
    expect(first.locator(".verdict")).to_be_visible()
    # A link-button and a real button side by side share one box.
    finish = page.get_by_role("link", name="Finish and see your score")
    button = page.locator("li.quiz-item").nth(1).get_by_role("button", name="Holds up")
    assert finish.bounding_box()["height"] == pytest.approx(button.bounding_box()["height"], abs=1)
    finish.click()
    expect(page.get_by_role("heading", level=1)).to_be_visible()

    page.goto(f"{base}/progress/")
    expect(page.locator("#overview-quizzes")).to_contain_text("1 attempt")
    expect(page.locator("#overview-questions")).to_contain_text("1 of 2 started")
    assert serious_violations(page) == [], "progress"
    with page.expect_download() as download:
        page.get_by_role("link", name="Download my progress (JSON)").click()
    saved = ARTIFACTS / f"course-walk-progress-{screen}.json"
    download.value.save_as(saved)
    data = json.loads(saved.read_text())
    assert data["format"] == "teachlab-progress/1" and len(data["quiz_attempts"]) == 1

    page.locator("#progress-file").set_input_files(str(saved))
    page.get_by_role("button", name="Import").click()
    report = page.locator("#import-report")
    expect(report).to_contain_text("Already here, kept: 1 tier revealed")
    expect(report).not_to_contain_text("Added")
    page.screenshot(path=str(ARTIFACTS / f"course-walk-{screen}.png"), full_page=True)


@pytest.mark.parametrize("screen", list(SCREENS))
def test_walk_the_course_path_export_and_import_without_console_errors(
    browser, fixture_lessons_url, screen
):
    context = browser.new_context(**SCREENS[screen])
    page = context.new_page()
    errors: list[str] = []
    page.on(
        "console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    try:
        walk(page, fixture_lessons_url, screen)
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"FAILED-course-walk-{screen}.png"), full_page=True)
        raise
    finally:
        context.close()
    assert errors == []

"""axe-core finds no serious or critical problem on the lesson pages, with every answer tier
and every follow-up open, on the fixture lessons and on the real ones."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe

from lessons.catalog import load_catalog
from lessons.loader import lesson_dir
from lessons.rendering import highlight_code, render_markdown

pytestmark = pytest.mark.browser


def serious_violations(page) -> list[str]:
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v["impact"] in {"serious", "critical"}
    ]


def open_everything(page) -> None:
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")


def test_index_has_no_serious_accessibility_violations(page, fixture_lessons_url):
    page.goto(f"{fixture_lessons_url}/")
    assert serious_violations(page) == []


def test_question_with_every_tier_revealed_has_no_serious_violations(page, fixture_lessons_url):
    page.goto(f"{fixture_lessons_url}/q/fixture-countdown/")
    page.get_by_role("button", name="Answer out loud (20 s)").click()
    for tier in ("basics", "solid", "senior"):
        page.get_by_role("link", name=f"Reveal {tier}").click()
        page.locator(f"#tier-{tier}").wait_for()
    open_everything(page)
    assert serious_violations(page) == []


def test_not_found_page_has_no_serious_violations(page, fixture_lessons_url):
    page.goto(f"{fixture_lessons_url}/q/no-such-question/")
    assert serious_violations(page) == []


def test_real_lessons_have_no_serious_violations(page, live_server_url):
    slugs = [q.slug for q in load_catalog(lesson_dir()).questions]
    if not slugs:
        pytest.skip("no lesson files in lessons/content yet")
    page.goto(f"{live_server_url}/")
    found = {"index": serious_violations(page)}
    for slug in slugs:
        page.goto(f"{live_server_url}/q/{slug}/senior/")
        open_everything(page)
        found[slug] = serious_violations(page)
    assert {name: v for name, v in found.items() if v} == {}


def test_every_lessons_page_fits_a_phone_and_scans_clean_there(browser, live_server_url):
    """At 375 px wide tables and code scroll inside their box, and axe wants each scroll box
    reachable by keyboard; the width check catches a page that scrolls sideways as a whole."""
    slugs = [q.slug for q in load_catalog(lesson_dir()).questions]
    paths = ["/", *(f"/q/{slug}/senior/" for slug in slugs), "/quiz/", "/review/", "/progress/"]
    paths += ["/progress/reset/", "/accounts/login/", "/accounts/signup/", "/q/no-such-question/"]
    paths += ["/search/?q=prefetch", "/search/?q=%22*"]
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    page = context.new_page()
    found = {}
    try:
        for path in paths:
            page.goto(f"{live_server_url}{path}")
            open_everything(page)
            width = page.evaluate("document.documentElement.scrollWidth")
            problems = serious_violations(page) + ([f"{width}px wide"] if width > 375 else [])
            if problems:
                found[path] = problems
    finally:
        context.close()
    assert found == {}


def test_lesson_tables_and_code_take_keyboard_focus_so_they_can_be_scrolled():
    html = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nx = 1\n```\n")
    assert '<table tabindex="0">' in html and '<pre tabindex="0">' in html
    assert '<pre tabindex="0">' in highlight_code("x = 1", "python")

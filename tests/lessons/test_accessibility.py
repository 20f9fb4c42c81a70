"""axe-core finds no serious or critical problem on the lesson pages, with every answer tier
and every follow-up open, on the fixture lessons and on the real ones."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe

from lessons.catalog import load_catalog
from lessons.loader import lesson_dir

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

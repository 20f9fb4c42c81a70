"""Every page a learner can reach logs no console error in Chromium and has no serious or
critical axe violation: each question, the quiz, review, progress, the lab, its history and
every experiment, with the quiz answered once.
(The run page live, the course walk and an experiment while it runs have walks of their own:
tests/lab/test_run_page_browser.py, tests/lessons/test_course_browser.py.)"""

from __future__ import annotations

import re

import pytest

from tests.lessons.test_accessibility import serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _pages(page, base: str) -> list[str]:
    """The site's own pages, found by following its links from the home page and the lists."""
    paths = ["/", "/quiz/", "/review/", "/progress/", "/progress/reset/", "/lab/", "/lab/runs/"]
    paths += ["/lab/experiments/", "/accounts/login/", "/accounts/signup/", "/workshop/"]
    for listing in ("/", "/lab/experiments/"):
        page.goto(f"{base}{listing}")
        for href in page.locator("a[href]").evaluate_all("links => links.map(a => a.pathname)"):
            if re.fullmatch(r"/q/[\w-]+/|/lab/experiments/[\w-]+/", href) and href not in paths:
                paths.append(href)
    return paths


def test_no_page_logs_a_console_error_or_has_a_serious_axe_violation(browser, live_server_url):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    violations: dict[str, list[str]] = {}
    page.on(
        "console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    try:
        paths = _pages(page, live_server_url)
        assert sum(p.startswith("/q/") for p in paths) >= 2, paths
        assert sum(p.startswith("/lab/experiments/") for p in paths) >= 3, paths
        for path in paths:
            response = page.goto(f"{live_server_url}{path}")
            assert response.ok, f"{path}: {response.status}"
            page.wait_for_load_state("networkidle")
            if found := serious_violations(page):
                violations[path] = found
        # A quiz started and answered, and its result page.
        page.goto(f"{live_server_url}/quiz/")
        page.get_by_role("button", name="Start a mixed quiz").click()
        page.locator(".quiz-item button[value='holds']").first.click()
        page.locator(".quiz-item .verdict").first.wait_for()
        page.get_by_role("link", name="Finish and see your score").click()
        page.wait_for_load_state("networkidle")
    finally:
        context.close()
    assert errors == []
    assert violations == {}

"""A guided experiment done in Chromium from its lesson page: predict, watch the run stream in
while the lab carries out the steps, then read the verdict against the prediction."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.slow]

SLUG = "countdown-beyond-timeout"


def _serious(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']}: {v['help']} ({len(v['nodes'])} nodes)"
        for v in results.response["violations"]
        if v.get("impact") in {"serious", "critical"}
    ]


def _fits_the_screen(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


@pytest.mark.timeout(240)
def test_an_experiment_is_completed_in_the_browser_from_its_lesson_page(
    page, live_server_url, lab_stack
):
    page.goto(f"{live_server_url}/q/raise-visibility-timeout/")
    # The lesson's own link to the experiment (others sit inside closed "How we know" lists).
    page.locator(f'a[href="/lab/experiments/{SLUG}/"]:visible').first.click()
    page.wait_for_url(f"**/lab/experiments/{SLUG}/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("longer than the visibility")
    assert _serious(page) == []

    page.get_by_label("How many times will workers receive this one task?").fill("3")
    # The question asks when the copies run too, so the page asks for a timing as well.
    page.get_by_label("All together, when the 25 s countdown ends").check()
    page.get_by_role("button", name="Run the experiment").click()
    page.wait_for_url(re.compile(rf"/lab/experiments/{SLUG}/attempts/[\w-]+/$"))
    attempt_url = page.url
    expect(page.locator(".your-prediction")).to_have_text("3 receipts")
    expect(page.locator(".your-timing")).to_contain_text("All together")
    # The status line is in plain words, not the experiment file's metric names.
    expect(page.locator(".attempt-status .step")).not_to_contain_text("is reached")

    # The run streams in like the live lab: the restored copies arrive as their own rows.
    expect(page.locator("#live-status")).to_have_text("Live: connected.", timeout=15_000)
    # (a locator, not wait_for_function: Playwright evals that string, which the CSP refuses)
    expect(page.locator("#receipts-body tr.redelivered").nth(1)).to_be_attached(timeout=40_000)
    assert _serious(page) == []

    # When the steps are done the page turns into the verdict by itself.
    verdict = page.get_by_role("heading", name="Prediction against observation")
    expect(verdict).to_be_visible(timeout=60_000)
    expect(page.locator(".overall")).to_contain_text("Every check passed")
    expect(page.locator(".check.bad")).to_have_count(0)
    expect(page.locator(".check.ok")).to_have_count(5)
    timing = page.locator(".prediction-table tr", has_text="Timing match")
    expect(timing).to_contain_text("Yes")
    observed = page.locator(".prediction-table tr", has_text="The broker showed")
    expect(observed).to_contain_text(re.compile(r"[3-9] receipts"))
    expect(page.locator(".checks")).to_contain_text("observed")
    expect(page.locator('a[href="/q/raise-visibility-timeout/solid/"]').first).to_be_visible()
    assert _serious(page) == []

    # The copies-per-task page of that run passes the same scan.
    run_href = page.locator(".watch .params a").first.get_attribute("href")
    run_id = run_href.rstrip("/").rsplit("/", 1)[-1]
    page.goto(f"{live_server_url}/lab/experiments/runs/{run_id}/")
    expect(page.locator(".hist-bars li")).to_have_count(1)  # one task, run 3+ times
    assert _serious(page) == []

    # The prediction was stored: the attempt page shows it again after a reload.
    page.goto(attempt_url)
    expect(page.locator(".your-prediction")).to_have_text("3 receipts")
    page.goto(f"{live_server_url}/lab/experiments/")
    expect(page.locator(".experiment-card", has_text="longer than the visibility")).to_contain_text(
        "every check passed"
    )


def test_experiment_pages_work_on_a_phone_sized_screen(browser, live_server_url):
    context = browser.new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    try:
        for path in ("/lab/experiments/", "/lab/experiments/crash-vs-warm-shutdown/"):
            page.goto(f"{live_server_url}{path}")
            assert _fits_the_screen(page), path
            assert _serious(page) == [], path
        expect(page.get_by_role("radio")).to_have_count(3)  # the choices, one per line
    finally:
        context.close()

"""The lab in Chromium against real workers: fire from the page, watch receipts stream in,
reload mid-run without losing or doubling rows, and scan every lab page with axe."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.slow]


def _serious(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']}: {v['help']} ({len(v['nodes'])} nodes)"
        for v in results.response["violations"]
        if v.get("impact") in {"serious", "critical"}
    ]


def _fire(page, base: str, *, countdown: str, count: str, prediction: str = "") -> None:
    page.goto(f"{base}/lab/")
    page.get_by_role("combobox", name="Lane").select_option("redis-short")
    page.get_by_label("Countdown (s)").fill(countdown)
    page.get_by_label("How many tasks").fill(count)
    if prediction:
        page.get_by_label("Your prediction: how many receipts?").fill(prediction)
    page.get_by_role("button", name="Fire").click()
    page.wait_for_url(re.compile(r"/lab/runs/[\w-]+/$"))


def _receipt_ids(page) -> list[str]:
    return page.locator("#receipts-body tr").evaluate_all("rows => rows.map(r => r.id)")


def test_a_run_fired_from_the_page_streams_every_receipt_live(page, live_server_url, lab_stack):
    # countdown 12 s on a 10 s visibility timeout: each task is handed out twice.
    _fire(page, live_server_url, countdown="12", count="2", prediction="4")
    expect(page.locator("#live-status")).to_have_text("Live: connected.", timeout=15_000)
    rows = page.locator("#receipts-body tr")
    expect(rows).to_have_count(2, timeout=10_000)
    expect(page.locator("#receipts-body tr.redelivered")).to_have_count(0)

    # The restored copies arrive while we watch, each as its own row, never folded.
    expect(page.locator("#receipts-body tr.redelivered")).to_have_count(2, timeout=20_000)
    expect(rows).to_have_count(4)
    receipts = page.locator("#counters dd[data-counter=receipts]")
    expect(receipts).to_have_text("4")
    expect(page.locator("#prediction")).to_contain_text("You predicted 4")
    # Both copies of both tasks run at the ETA, and the page says so.
    expect(page.locator("#counters dd[data-counter=executions]")).to_have_text("4", timeout=15_000)
    expect(page.locator("#receipts-body td.outcome.executed")).to_have_count(4)
    expect(page.locator(".timeline .tl-copy")).to_have_count(4)

    # The timeline draws both copies of a task as held until the same run time, and the
    # first copy's bar stays visible under the second copy's timeout window.
    page.locator(".timeline").scroll_into_view_if_needed()
    bars = page.evaluate(
        """() => Array.from(document.querySelectorAll('.tl-row')).map(row =>
            Array.from(row.querySelectorAll('.tl-hold')).map(bar => {
              const r = bar.getBoundingClientRect();
              const hit = document.elementFromPoint(r.right - 2, r.top + r.height / 2);
              return {left: r.left, right: r.right, visible: hit === bar};
            }))"""
    )
    assert len(bars) == 2
    for first, second in bars:
        assert first["left"] < second["left"]
        assert abs(first["right"] - second["right"]) < 8  # both ran at the ETA
        assert first["visible"] and second["visible"]


def test_a_page_reloaded_mid_run_shows_the_events_so_far_once_and_goes_on(
    page, live_server_url, lab_stack
):
    _fire(page, live_server_url, countdown="12", count="1")
    expect(page.locator("#receipts-body tr")).to_have_count(1, timeout=15_000)
    page.reload()
    expect(page.locator("#live-status")).to_have_text("Live: connected.", timeout=15_000)
    expect(page.locator("#receipts-body tr")).to_have_count(1)
    expect(page.locator("#receipts-body tr.redelivered")).to_have_count(1, timeout=20_000)
    ids = _receipt_ids(page)
    assert len(ids) == len(set(ids)) == 2


def test_lab_pages_pass_axe_and_fit_a_phone(page, live_server_url, lab_stack):
    _fire(page, live_server_url, countdown="1", count="1")
    run_url = page.url
    expect(page.locator("#receipts-body tr")).to_have_count(1, timeout=15_000)
    for url in (f"{live_server_url}/lab/", f"{live_server_url}/lab/runs/", run_url):
        page.goto(url)
        page.wait_for_load_state("networkidle")
        assert _serious(page) == [], url
    page.set_viewport_size({"width": 375, "height": 740})
    for url in (f"{live_server_url}/lab/", run_url):
        page.goto(url)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"{url} scrolls sideways by {overflow}px on a phone"

"""The copies table reads whole: at 1366 px no header and no "executed at …" is cut short, and
a phone keeps the Redelivered column (under a short heading) without scrolling sideways
(issue 29). The table is the run page's own (teachlab/lab/live/run_html.py, which
tests/lab/test_run_html.py holds equal to the template) in the run page's grid, drawn by the
site's CSS on a served page; no broker is needed to lay it out."""

from __future__ import annotations

import pytest

from teachlab.lab.live.fragments import Copy
from teachlab.lab.live.run_html import receipts_table

pytestmark = pytest.mark.browser

CUT_SHORT = """() => [...document.querySelectorAll('#receipts th, #receipts td')]
  .filter(c => getComputedStyle(c).display !== 'none' && c.scrollWidth > c.clientWidth + 1)
  .map(c => c.textContent.trim())"""


def _copies() -> list[Copy]:
    """Two tasks of a 25 s countdown on a 10 s timeout: three copies each, the later two
    redelivered, on both workers, all executed at the due time."""
    return [
        Copy(
            task_id=f"task-{i}",
            dom=f"t{i}",
            copy=n + 1,
            t=i + 10.0 * n + 0.04,
            vt=10.0,
            worker=f"celery@redis-short-{n % 2 + 1}",
            redelivered=n > 0,
            index=i,
            outcome="executed",
            ran=25.6 + i,
        )
        for i in range(2)
        for n in range(3)
    ]


def _run_page(page, base: str) -> None:
    page.goto(f"{base}/lab/")  # lab.css and site.css, as the run page loads them
    page.evaluate(
        """table => { const main = document.querySelector('main');
             main.className = 'wide run-page';
             main.innerHTML = '<div class="run-grid"><div class="run-main"><section class="panel">'
               + '<h2>Timeline</h2></section></div><div class="run-side"><section class="panel">'
               + '<h2 id="h-receipts">Copies, one row per delivery</h2>' + table
               + '</section></div></div>'; }""",
        receipts_table(_copies()),
    )


def test_at_1366_px_no_header_or_outcome_is_cut_short(page, live_server_url):
    page.set_viewport_size({"width": 1366, "height": 900})
    _run_page(page, live_server_url)
    assert page.locator("#receipts").get_by_text("executed at 25.60 s").first.is_visible()
    assert page.evaluate(CUT_SHORT) == []


def test_a_phone_keeps_the_redelivered_column(page, live_server_url):
    page.set_viewport_size({"width": 390, "height": 844})
    _run_page(page, live_server_url)
    header = page.get_by_role("columnheader", name="Redelivered")
    assert header.locator(".th-short").is_visible()  # "Again" on screen, the full name read out
    assert header.locator(".th-long").bounding_box()["width"] <= 1
    again = page.locator("#receipts-body tr.redelivered td:nth-child(5)").first
    assert again.is_visible() and again.inner_text() == "yes"
    wide = page.evaluate(
        "document.querySelector('#receipts').scrollWidth"
        " - document.querySelector('#receipts').clientWidth"
    )
    assert wide <= 1
    assert page.evaluate(CUT_SHORT) == []

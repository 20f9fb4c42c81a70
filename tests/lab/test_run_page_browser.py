"""One walk through the run page that explains itself, in Chromium against real workers: a
single countdown and a 20-task batch on redis-short, read at 1366x900 without scrolling and
on a 390x844 phone; an experiment runs beside them; no page logs a console error."""

from __future__ import annotations

import re
import subprocess

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.slow]

LAPTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def lab_monitor(lab_stack):
    """The `lab monitor` scripts/run starts: broker and worker snapshots, settling runs."""
    proc = lab_stack.lab_popen("monitor")
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _serious(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']}: {v['help']} ({len(v['nodes'])} nodes)"
        for v in results.response["violations"]
        if v.get("impact") in {"serious", "critical"}
    ]


def _watch_console(page, errors: list[str]) -> None:
    def on_console(message) -> None:
        if message.type == "error":
            errors.append(f"{page.url}: {message.text}")

    page.on("console", on_console)
    page.on("pageerror", lambda exc: errors.append(f"{page.url}: {exc}"))


def _fire(page, base: str, *, countdown: str, count: str, spacing: str = "0") -> None:
    page.goto(f"{base}/lab/")
    page.get_by_role("combobox", name="Lane").select_option("redis-short")
    page.get_by_label("Countdown (s)").fill(countdown)
    page.get_by_label("How many tasks").fill(count)
    page.get_by_label("Spacing (s)").fill(spacing)
    page.get_by_role("button", name="Fire").click()
    page.wait_for_url(re.compile(r"/lab/runs/[\w-]+/$"))


def _fits_a_phone(page) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - innerWidth")
    assert overflow <= 1, f"{page.url} scrolls sideways by {overflow}px on a phone"
    wide = page.evaluate(
        """() => ['#receipts', '.counter-grid'].map(s => {
             const el = document.querySelector(s);
             return el.scrollWidth - el.clientWidth; })"""
    )
    assert max(wide) <= 1, f"receipts or counters scroll sideways: {wide}"


def _on_first_screen(page, selector: str) -> bool:
    """The element's top is inside the viewport with the page not scrolled."""
    return page.evaluate(
        """sel => { const el = document.querySelector(sel); if (!el) return false;
            const r = el.getBoundingClientRect();
            return window.scrollY === 0 && r.height > 0 && r.top >= 0 && r.top < innerHeight; }""",
        selector,
    )


@pytest.mark.timeout(180)
def test_a_countdown_and_a_batch_explain_themselves_on_a_laptop_screen_and_a_phone(
    browser, live_server_url, lab_stack, lab_monitor
):
    errors: list[str] = []
    context = browser.new_context(viewport=LAPTOP)
    try:
        # An experiment beside the runs: its page watches a run over the same socket.
        experiment = context.new_page()
        _watch_console(experiment, errors)
        experiment.goto(f"{live_server_url}/lab/experiments/countdown-within-timeout/")
        experiment.get_by_label("How many times will workers receive the task?").fill("1")
        experiment.get_by_role("button", name="Run the experiment").click()
        experiment.wait_for_url(re.compile(r"/attempts/[\w-]+/$"))

        batch = context.new_page()
        _watch_console(batch, errors)
        # The run form explains itself: the whole lane name shows, fields say what they do,
        # and the experiments' own lanes are labelled in the workers table.
        batch.goto(f"{live_server_url}/lab/")
        assert batch.get_by_role("combobox", name="Lane").evaluate(
            """sel => { const c = document.createElement('canvas').getContext('2d');
                c.font = getComputedStyle(sel).font;
                return c.measureText(sel.options[sel.selectedIndex].text).width + 24
                       <= sel.clientWidth; }"""
        ), "the lane's name is cut off"
        expect(batch.get_by_text("How long each task's body sleeps")).to_be_visible()
        expect(batch.get_by_text("Acknowledge the message when the body ends")).to_be_visible()
        expect(batch.locator(".workers-table").first).to_contain_text("(experiment lane)")
        # 20 tasks due 4 s to 13.5 s on a 10 s timeout: the last ones are handed out twice.
        _fire(batch, live_server_url, countdown="4", count="20", spacing="0.5")
        page = context.new_page()
        _watch_console(page, errors)
        _fire(page, live_server_url, countdown="13", count="1")  # received at 0 s and ~10.6 s

        # While the batch waits, each worker's holdings show beside Redis's unacked list.
        held = batch.locator("#holders td[data-held]:not([data-held='0'])")
        expect(held.first).to_be_visible(timeout=15_000)
        expect(batch.locator("#holders td[data-unacked]")).to_have_text(re.compile(r"^\d+$"))
        expect(batch.locator("#broker")).to_contain_text("Queue length")
        # The broker panel follows the monitor's snapshots, twice a second.
        batch.evaluate(
            """() => { window.brokerSwaps = [];
                new MutationObserver(changes => changes.forEach(c => c.addedNodes.forEach(n => {
                  if (n.id === 'broker') window.brokerSwaps.push(performance.now()); })))
                .observe(document.getElementById('live'), {childList: true, subtree: true}); }"""
        )
        batch.wait_for_timeout(3_000)
        swaps = batch.evaluate("window.brokerSwaps")
        assert len(swaps) >= 5, f"the broker panel changed {len(swaps)} times in 3 s"

        # The live page on a phone: receipts and counters without sideways scrolling.
        batch.set_viewport_size(PHONE)
        expect(batch.locator("#receipts-body tr").first).to_be_visible()
        _fits_a_phone(batch)
        batch.set_viewport_size(LAPTOP)

        # The single countdown, on one laptop screen without scrolling.
        expect(page.locator("#live-status")).to_have_text(
            "Run finished: every copy has settled.", timeout=30_000
        )
        rows = page.locator("#receipts-body tr")
        expect(rows).to_have_count(2)
        # Its rows are laid out as grids, not as a CSS table (lab.css), and keep their roles.
        copies = page.get_by_role("region", name="Copies, one row per delivery")
        expect(copies.get_by_role("table")).to_have_count(1)
        expect(copies.get_by_role("row")).to_have_count(3)  # the header and the two copies
        expect(copies.get_by_role("columnheader")).to_have_count(6)
        expect(copies.get_by_role("cell")).to_have_count(12)
        for i in range(2):
            cells = rows.nth(i).locator("td")
            expect(cells.nth(2)).to_have_text(re.compile(r"^\d+\.\d\d s$"))  # received
            expect(cells.nth(5)).to_have_text(re.compile(r"^executed at 1[34]\.\d\d s$"))
        expect(rows.nth(1).locator("td").nth(3)).to_have_text(re.compile(r"^redis-short-\d$"))
        expect(page.locator(".counter-defs li")).to_have_count(6)
        expect(page.locator("#counters [data-counter=amplification]")).to_have_text("2.00×")
        explain = page.locator("#explain")
        expect(explain).to_contain_text("timeouts passed: 1")
        expect(explain).to_contain_text("copies expected: 2")
        expect(explain).to_contain_text("copies seen: 2")
        expect(page.locator("#celery-code")).to_contain_text("countdown=13")
        expect(page.locator("#celery-code")).to_contain_text('"visibility_timeout": 10')
        copy = page.locator("button.copy-code")
        expect(copy).to_have_text("Copy")
        copy.click()  # to the clipboard, or selected for Ctrl+C where the browser refuses
        expect(copy).to_have_text(re.compile(r"^(Copied|Selected: press Ctrl\+C)$"))
        for selector in ("#receipts-body tr", ".counter-defs li", "#explain p", "#celery-code"):
            assert _on_first_screen(page, selector), f"{selector} is below the first screen"
        assert _serious(page) == []

        # The batch: copies per task and receipts over time once it is over; rows in ETA order.
        expect(batch.locator("#live-status")).to_have_text(
            "Run finished: every copy has settled.", timeout=30_000
        )
        receipts = batch.locator("#counters [data-counter=receipts]").inner_text()
        expect(batch.locator("#receipts-body tr")).to_have_count(int(receipts))
        expect(batch.locator(".hist-bars li")).to_have_count(2)  # 1 copy and 2 copies
        expect(batch.locator(".hist-bars li").first).to_contain_text("1×")
        labels = batch.locator(".tl-row .tl-label").all_inner_texts()
        assert len(labels) == 20
        tops = batch.locator(".tl-row").evaluate_all(
            "rows => rows.map(r => [r.querySelector('.tl-label').textContent,"
            " r.getBoundingClientRect().top])"
        )
        shown = [int(label.split()[1]) for label, _top in sorted(tops, key=lambda x: x[1])]
        assert shown == list(range(20)), shown  # sorted by ETA however they arrived
        # Every chart has its legend; every bar of the timeline can be seen (>= 4 x 6 px).
        figures = batch.locator("figure")
        assert figures.count() >= 2
        assert batch.locator("figure .plot-legend").count() == figures.count()
        bars = batch.locator(".tl-hold").evaluate_all(
            "bars => bars.map(b => [b.getBoundingClientRect().width,"
            " b.getBoundingClientRect().height])"
        )
        assert bars and all(w >= 4 and h >= 6 for w, h in bars), bars
        assert batch.evaluate(
            "getComputedStyle(document.getElementById('timeline-rows')).overflowY"
        ) in {"visible", "clip"}

        # The finished page on a phone too.
        page.set_viewport_size(PHONE)
        page.reload()
        expect(page.locator("#receipts-body tr").first).to_be_visible()
        _fits_a_phone(page)

        # The experiment finished beside us; its page logged no error either.
        verdict = experiment.get_by_role("heading", name="Prediction against observation")
        expect(verdict).to_be_visible(timeout=60_000)
        assert errors == []
    finally:
        context.close()

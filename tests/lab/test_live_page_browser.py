"""The lab in Chromium against real workers: fire from the page, watch receipts stream in,
reload mid-run without losing or doubling rows, and scan every lab page with axe."""

from __future__ import annotations

import re
import subprocess

import pytest
from playwright.sync_api import expect

from tests.readme_shots import readme_screenshot

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
    readme_screenshot(page, "lab")

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


def test_a_dropped_connection_reconnects_shows_what_it_missed_once_and_goes_on_live(
    page, live_server_url, lab_stack
):
    # Every run socket goes through this route, so the test can drop it as a network
    # would (code 1012: htmx's ws extension reconnects) and keep it down for a while.
    offline = {"on": False}
    sockets = []

    def route(ws):
        sockets.append(ws)
        if offline["on"]:
            ws.close(code=1013, reason="test: network down")
        else:
            ws.connect_to_server()

    page.route_web_socket(re.compile(r"/ws/lab/runs/"), route)
    # countdown 16 s on a 10 s timeout: a restored copy near 10.6 s, both copies run at 16 s.
    _fire(page, live_server_url, countdown="16", count="1")
    expect(page.locator("#receipts-body tr")).to_have_count(1, timeout=15_000)
    offline["on"] = True
    sockets[-1].close(code=1012, reason="test: connection dropped")
    page.wait_for_timeout(12_500)  # the restored copy is received while we are away
    expect(page.locator("#receipts-body tr")).to_have_count(1)
    expect(page.locator("#counters dd[data-counter=receipts]")).to_have_text("1")

    offline["on"] = False
    # Back online: the copy missed while away is drawn from the stored events...
    expect(page.locator("#receipts-body tr.redelivered")).to_have_count(1, timeout=15_000)
    expect(page.locator("#live-status")).to_have_text("Live: connected.")
    expect(page.locator("#counters dd[data-counter=receipts]")).to_have_text("2")
    # ...and the executions at 16 s arrive live on the new socket.
    expect(page.locator("#counters dd[data-counter=executions]")).to_have_text("2", timeout=15_000)
    expect(page.locator("#receipts-body td.outcome.executed")).to_have_count(2)
    ids = _receipt_ids(page)
    assert len(ids) == len(set(ids)) == 2


@pytest.fixture
def lab_monitor(lab_stack):
    """The `lab monitor` process scripts/run starts: it settles finished runs (lab.done)."""
    proc = lab_stack.lab_popen("monitor")
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_a_finished_run_replays_from_its_stored_events_at_1x_and_10x(
    page, live_server_url, lab_stack, lab_monitor
):
    # Two tasks received at once and run 5 s later: the replay's clock shows in when they run.
    _fire(page, live_server_url, countdown="5", count="2")
    expect(page.locator("#live-status")).to_have_text(
        "Run finished: every copy has settled.", timeout=25_000
    )
    page.reload()
    executed = page.locator("#receipts-body td.outcome.executed")
    expect(executed).to_have_count(2)
    replay = page.locator(".replay")

    replay.get_by_role("button", name="1×").click()
    expect(page.locator("#live-status")).to_have_text("Replaying at 1×…")
    expect(page.locator("#receipts-body tr")).to_have_count(2, timeout=2_000)
    page.wait_for_timeout(2_500)  # at 1x nothing has run yet 2.5 s in
    expect(executed).to_have_count(0)
    expect(page.locator("#counters dd[data-counter=executions]")).to_have_text("0")

    replay.get_by_role("button", name="10×").click()  # starts over, ten times faster
    expect(page.locator("#live-status")).to_have_text("Replaying at 10×…")
    expect(page.locator("#live-status")).to_have_text("Replay finished.", timeout=3_000)
    expect(executed).to_have_count(2)
    expect(page.locator("#counters dd[data-counter=executions]")).to_have_text("2")
    ids = _receipt_ids(page)
    assert len(ids) == len(set(ids)) == 2

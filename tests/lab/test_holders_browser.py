"""The run page's panel "What each worker holds" in Chromium with real workers (issue 29 item 1):
one task with `countdown=25` on redis-short (10 s timeout, 1 s sweep) is handed out at about 0,
10 and 20 s, and its lane has two workers, so from the third copy on one worker holds at least
two of the three while Redis lists one `unacked` entry. The panel must count the copies, not
the task ids, and say why workers hold more than Redis lists."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.lab.test_run_page_browser import _fire, lab_monitor  # noqa: F401 - a fixture

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.slow]


@pytest.mark.timeout(180)
def test_two_copies_of_one_task_on_one_worker_count_two(page, live_server_url, lab_monitor):  # noqa: F811
    _fire(page, live_server_url, countdown="25", count="1")

    holders = page.locator("#holders")
    two_or_more = holders.locator("td[data-held='2'], td[data-held='3']")
    expect(two_or_more.first).to_be_visible(timeout=30_000)
    held = [
        int(n)
        for n in holders.locator("td[data-held]").evaluate_all(
            "cells => cells.map(c => c.dataset.held)"
        )
    ]
    assert max(held) >= 2 and sum(held) <= 3, held
    expect(holders.locator("td[data-unacked]")).to_have_text("1")
    expect(holders.locator(".why-differ")).to_contain_text(
        re.compile(r"So [23] copies in workers, 1 entry in Redis")
    )

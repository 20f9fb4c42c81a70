"""A workshop end to end in Chromium: one instructor, three participants on phone-sized
screens, each in a browser context of their own, against the live server (daphne)."""

from __future__ import annotations

import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from tests.conftest import ARTIFACTS
from tests.readme_shots import readme_screenshot
from tests.stack import manage

pytestmark = pytest.mark.browser

PASSWORD = "workshop-pass-123"
PHONE = {"width": 390, "height": 844}


def _staff_user(username: str) -> None:
    manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model as g; U = g(); "
        f"u = U.objects.filter(username={username!r}).first() or U.objects.create_user({username!r}); "
        f"u.is_staff = True; u.set_password({PASSWORD!r}); u.save()",
    )


def _instructor(browser: Browser, base: str) -> Page:
    _staff_user("teacher")
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{base}/accounts/login/?next=/workshop/")
    page.fill("#id_username", "teacher")
    page.fill("#id_password", PASSWORD)
    page.click("form.auth-form button[type=submit]")
    page.goto(f"{base}/workshop/")
    page.fill("#id_title", "Browser workshop")
    page.click("form.create button[type=submit]")
    expect(page).to_have_url(re.compile(r"/workshop/r/[A-Z0-9]+/present/$"))
    return page


def _participant(browser: Browser, base: str, code: str, nickname: str) -> Page:
    page = browser.new_context(viewport=PHONE).new_page()
    page.goto(f"{base}/workshop/")
    page.fill("#join-code", code.lower())
    page.fill("#join-nick", nickname)
    page.click("form.join-form button[type=submit]")
    expect(page.locator(".who .nick")).to_have_text(nickname)
    return page


def serious_violations(page: Page) -> list[str]:
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v["impact"] in {"serious", "critical"}
    ]


def _connected(page: Page) -> None:
    """The socket's first frame (the room's state) has arrived."""
    expect(page.locator("#ws-stage[data-sent]")).to_have_count(1)
    # Polled with evaluate: wait_for_function evals its predicate, which the CSP refuses.
    socket_open = (
        "() => { const r = document.querySelector('[ws-connect]');"
        " const w = r && window.htmx && htmx.find('[ws-connect]') && r['htmx-internal-data'];"
        " return !!(w && w.webSocket && w.webSocket.socket && w.webSocket.socket.readyState === 1); }"
    )
    for _ in range(100):
        if page.evaluate(socket_open):
            return
        page.wait_for_timeout(100)
    raise AssertionError("the room's socket did not open within 10 s")


def test_a_room_joins_follows_votes_sees_the_reveal_and_watches_a_shared_run(
    browser, live_server_url, room_lab
):
    base = live_server_url
    teacher = _instructor(browser, base)
    code = teacher.locator(".present-head .code").inner_text().strip()
    assert teacher.locator(".qr-figure svg").count() == 1
    people = [_participant(browser, base, code, name) for name in ("Ana", "Bo", "Chidi")]
    for page in [teacher, *people]:
        _connected(page)
    expect(teacher.locator("#ws-seats summary")).to_contain_text("3 joined")

    # Follow mode: the tier the instructor shows appears on every phone.
    question_title = teacher.locator("#drive-q option").first.inner_text()
    teacher.click("form.drive button[data-tier=solid]")
    for page in people:
        expect(page.locator("#ws-stage")).to_have_attribute("data-tier", "solid")
        expect(page.locator("#ws-stage h2")).to_have_text(question_title)

    # One participant browses away, the room moves on, and "back" catches up.
    wanderer = people[0]
    wanderer.click("text=Browse the questions on your own")
    expect(wanderer.locator("#browse .browse-content")).to_be_visible()
    expect(wanderer.locator("#ws-stage")).to_be_hidden()
    teacher.click("form.drive button[data-tier=senior]")
    expect(wanderer.locator("#ws-banner")).to_contain_text("Senior")
    wanderer.locator("#ws-banner button.back").click()
    expect(wanderer.locator("#ws-stage")).to_be_visible()
    expect(wanderer.locator("#ws-stage")).to_have_attribute("data-tier", "senior")

    # A claim vote: the presenter counts answers as they arrive, then reveals.
    teacher.locator("#ws-claims button[data-claim]").first.click()
    for n, page in enumerate(people):
        expect(page.locator("#ws-claim")).to_have_attribute("data-state", "open")
        page.click("button.vote.holds" if n < 2 else "button.vote.costs")
        expect(page.locator("#ws-myvote")).to_contain_text("Your vote")
        expect(teacher.locator("#ws-answered")).to_contain_text(f"answered {n + 1} of 3 present")
    # Bo changes his mind before the reveal: still three answers.
    people[1].click("button.vote.costs")
    expect(people[1].locator("#ws-myvote")).to_contain_text("Costs you the question")
    teacher.click("button.reveal-btn")
    for page in [teacher, *people]:
        expect(page.locator("#ws-claim")).to_have_attribute("data-state", "revealed")
        expect(page.locator("#ws-claim .reveal")).to_contain_text("Holds up: 1 (33%)")
        expect(page.locator("#ws-claim .reveal")).to_contain_text("Costs you the question: 2 (67%)")
        expect(page.locator("#ws-claim .verdict")).to_contain_text("The answer:")

    assert serious_violations(people[0]) == []
    # The lab's worker controls are on the presenter screen, never on a participant's.
    expect(teacher.locator("#workers table.workers-table")).to_have_count(1)
    assert people[0].locator("#workers").count() == 0
    assert serious_violations(teacher) == []
    ARTIFACTS.mkdir(exist_ok=True)
    teacher.screenshot(path=str(ARTIFACTS / "workshop-presenter.png"), full_page=True)
    people[0].screenshot(path=str(ARTIFACTS / "workshop-phone.png"), full_page=True)

    # Refresh puts a participant back in the same seat.
    people[2].reload()
    expect(people[2].locator(".who .nick")).to_have_text("Chidi")
    expect(people[2].locator("#ws-claim")).to_have_attribute("data-state", "revealed")

    # A shared run: the room predicts, the presenter sees the spread, every screen watches.
    teacher.locator("details.run-open").evaluate("d => d.open = true")
    teacher.select_option("#run-lane", "redis-short")
    teacher.fill("#run-count", "3")
    teacher.fill("#run-countdown", "1")
    teacher.select_option("#run-metric", "receipts")
    teacher.click("form.run-form button[type=submit]")
    for page, guess in zip(people, ("3", "6", "9"), strict=True):
        expect(page.locator("#ws-run")).to_have_attribute("data-state", "open")
        page.fill("#pred-value", guess)
        page.click("form.predict button[type=submit]")
        expect(page.locator("#ws-myprediction")).to_contain_text(f"Your prediction: {guess}")
    expect(teacher.locator("#ws-spread")).to_contain_text("3 predictions: from 3 to 9, median 6")
    teacher.click("button.fire-btn")
    for page in [teacher, *people]:
        expect(page.locator("#ws-run")).to_have_attribute("data-state", re.compile("fired|done"))
        expect(page.locator("#receipts-body tr")).to_have_count(3, timeout=20_000)
        expect(page.locator("#receipts-body td.outcome.executed")).to_have_count(3)
        expect(page.locator('#counters [data-counter="receipts"]')).to_have_text("3")
    for page in [teacher, *people]:
        expect(page.locator("#ws-outcome .observed")).to_have_text("3", timeout=30_000)
        expect(page.locator("#ws-outcome .closest")).to_contain_text("Ana")
    readme_screenshot(teacher, "workshop", show="#ws-run")

    people[1].screenshot(path=str(ARTIFACTS / "workshop-phone-run.png"), full_page=True)
    assert serious_violations(people[1]) == []

    # The results page and the join page pass the same scan.
    teacher.goto(f"{base}/workshop/r/{code}/results/")
    expect(teacher.locator("table.results").first).to_contain_text("Chidi")
    assert serious_violations(teacher) == []
    people[0].goto(f"{base}/workshop/join/?code={code}")
    assert serious_violations(people[0]) == []
    teacher.goto(f"{base}/workshop/")
    expect(teacher.locator(".my-rooms")).to_contain_text(code)
    assert serious_violations(teacher) == []

    for page in people:
        page.context.close()
    teacher.context.close()

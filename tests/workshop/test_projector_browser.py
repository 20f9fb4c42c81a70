"""The projector view beside the instructor console, in Chromium, with five participants
(one on a phone, four on laptops) against the live server: a timed vote, an answer round,
look-alike and blank nicknames refused at the door, a shared run whose spread the console
keeps from the room, a participant removed, and the CSV exports that keep it all."""

from __future__ import annotations

import csv
import io
import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.conftest import ARTIFACTS
from tests.workshop.test_browser import PHONE, _connected, _instructor, serious_violations
from tests.workshop.test_screens_errors_browser import _errors_of

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1366, "height": 768}
LAPTOP = {"width": 1280, "height": 800}
HOLDS, COSTS = "Holds up", "Costs you the question"


def _participant(browser: Browser, base: str, code: str, nickname: str, viewport) -> Page:
    page = browser.new_context(viewport=viewport).new_page()
    page.goto(f"{base}/workshop/join/?code={code}")
    return _join_as(page, nickname)


def _join_as(page: Page, nickname: str) -> Page:
    page.fill("#join-nick", nickname)
    page.click("form.join-form button[type=submit]")
    expect(page.locator(".who .nick")).to_have_text(nickname)
    return page


def _refused(page: Page, nickname: str, says: str) -> None:
    """The join page comes back with the refusal and the name as typed; no seat is made."""
    page.fill("#join-nick", nickname)
    page.click("form.join-form button[type=submit]")
    expect(page.locator("form.join-form .ws-error")).to_have_text(says)
    expect(page.locator("#join-nick")).to_have_value(nickname)
    assert page.locator(".who .nick").count() == 0


def _above_the_fold(page: Page, selector: str) -> None:
    box = page.locator(selector).first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= PROJECTOR["height"], (selector, box)


def _csv(console: Page, base: str, code: str, kind: str) -> list[dict]:
    """An export, fetched with the console's session (the instructor's login)."""
    response = console.context.request.get(f"{base}/workshop/r/{code}/results/{kind}.csv")
    assert response.ok, (kind, response.status)
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert response.body().startswith(b"\xef\xbb\xbf"), kind  # the BOM Excel reads UTF-8 by
    return list(csv.DictReader(io.StringIO(response.body().decode("utf-8-sig"))))


def test_five_seats_through_a_timed_vote_answers_a_hidden_spread_run_a_removal_and_the_csv(
    browser, live_server_url, room_lab
):
    base = live_server_url
    console = _instructor(browser, base)
    console_errors = _errors_of(console)
    code = console.locator(".present-head .code").inner_text().strip()
    screen_url = console.locator("a.open-screen").get_attribute("href")
    # The instructor's session on the big screen, in a window of its own: a second tab of
    # the console's would leave the console a background tab, where Chromium throttles
    # animation frames and each click waits about two seconds to see its button stand still.
    projector = browser.new_context(
        viewport=PROJECTOR, storage_state=console.context.storage_state()
    ).new_page()
    projector_errors = _errors_of(projector)
    projector.goto(f"{base}{screen_url}")
    expect(projector.locator(".screen-join .code")).to_have_text(code)
    expect(projector.locator(".screen-join .join-page")).to_contain_text("/workshop/join/")
    expect(projector.locator(".screen-join .join-warning")).to_contain_text("cannot use")
    assert projector.locator(".screen-join .qr-figure svg").count() == 1
    assert projector.locator("form, button, input, textarea, .site-header").count() == 0

    # Ana's socket goes through a route, so the test can cut it as a dropped network would.
    network = {"down": False, "sockets": []}

    def route(ws):
        if network["down"]:
            ws.close(code=1013, reason="test: network down")
        else:
            network["sockets"].append((ws, ws.connect_to_server()))

    ana_context = browser.new_context(viewport=PHONE)
    ana_context.route_web_socket(re.compile(r"/ws/workshop/"), route)
    ana = ana_context.new_page()
    ana.goto(f"{base}/workshop/join/?code={code}")
    _join_as(ana, "Ana")
    bo = _participant(browser, base, code, "Bo", LAPTOP)
    seats = console.locator("#ws-seats summary")
    expect(seats).to_have_text("2 joined")

    # At the door: names that would pass for Ana or Bo (a Cyrillic А, a Cyrillic о), and one
    # that shows nothing, are refused in words; the same browser then joins under its own.
    chidi = browser.new_context(viewport=LAPTOP).new_page()
    chidi.goto(f"{base}/workshop/join/?code={code}")
    alike = "Pick a nickname that looks different."
    _refused(
        chidi,
        "\u0410na",
        f"“\u0410na” looks too much like “Ana”, who is already in this room. {alike}",
    )
    _refused(
        chidi,
        "B\u043e",
        f"“B\u043e” looks too much like “Bo”, who is already in this room. {alike}",
    )
    _refused(
        chidi,
        "\u3164\u3164",
        "That nickname would show as blank (Hangul filler). "
        "Pick one with letters or digits the room can read.",
    )
    expect(seats).to_have_text("2 joined")
    _join_as(chidi, "Chidi")
    dee = _participant(browser, base, code, "Dee", LAPTOP)
    eve = _participant(browser, base, code, "Eve", LAPTOP)
    people = {"Ana": ana, "Bo": bo, "Chidi": chidi, "Dee": dee, "Eve": eve}
    # Every seat the refusals could have made would have been drawn before Chidi's.
    expect(seats).to_have_text("5 joined")
    # The moderation list follows the joins, newest first, without a search (seat-list.js).
    expect(console.locator("#ws-seat-rows .seat-name")).to_have_text(
        ["Eve", "Dee", "Chidi", "Bo", "Ana"], timeout=10_000
    )
    expect(console.locator("#ws-seats li")).to_have_text(list(people))
    for page in (console, projector, *people.values()):
        _connected(page)
    expect(projector.locator("#ws-presence")).to_have_text("5 connected")
    expect(console.locator("#ws-presence")).to_have_text("5 connected")

    # Presence: Ana's connection drops; her phone says so, the room counts one fewer.
    expect(ana.locator(".reconnecting")).to_be_hidden()
    network["down"] = True
    page_side, server_side = network["sockets"][-1]
    page_side.close(code=1012, reason="test: connection dropped")  # htmx retries on 1012
    server_side.close()  # and the server sees the socket go, as it would
    expect(ana.locator(".reconnecting")).to_be_visible()
    expect(projector.locator("#ws-presence")).to_have_text("4 connected")
    network["down"] = False
    expect(ana.locator(".reconnecting")).to_be_hidden(timeout=10_000)
    expect(projector.locator("#ws-presence")).to_have_text("5 connected")

    # A timed vote: the projector shows the claim and the count, never the answer before
    # the reveal; at zero the phones put their buttons away. Dee never votes.
    console.click("form.drive button[data-tier=prompt]")
    title = console.locator("#drive-q option").first.inner_text()
    expect(projector.locator("#ws-stage h2")).to_have_text(title)
    first_claim = console.locator("#ws-claims li").first
    right = HOLDS if first_claim.locator(".tag").inner_text() == "holds" else COSTS
    first_claim.locator("button[data-claim]").click()
    claim = projector.locator("#ws-claim")
    expect(claim).to_have_attribute("data-state", "open")
    chosen = {"Bo": COSTS, "Chidi": HOLDS, "Eve": COSTS, "Ana": HOLDS}
    early = ("Bo", "Chidi", "Eve")
    for name in early:
        people[name].click("button.vote.holds" if chosen[name] == HOLDS else "button.vote.costs")
    for name in early:
        expect(people[name].locator("#ws-myvote")).to_contain_text(chosen[name])
    expect(projector.locator("#ws-answered")).to_have_text("answered 3 of 5 present")
    console.fill("#claim-seconds", "5")
    console.click("button.timer-btn")
    expect(projector.locator("#ws-claimtimer")).to_contain_text("Votes close in")
    expect(bo.locator("#ws-claimtimer")).to_contain_text("Votes close in")
    ana.click("button.vote.holds")
    expect(ana.locator("#ws-myvote")).to_contain_text(HOLDS)
    expect(projector.locator("#ws-answered")).to_have_text("answered 4 of 5 present")
    expect(console.locator("#ws-answered")).to_have_text("answered 4 of 5 present")
    expect(projector.locator("main")).not_to_contain_text(re.compile("holds up", re.I))
    expect(projector.locator("main")).not_to_contain_text(re.compile("costs you", re.I))
    _above_the_fold(projector, "#ws-stage h2")
    _above_the_fold(projector, "#ws-claim .claim-text")
    _above_the_fold(projector, ".screen-join .code")
    size = projector.locator("#ws-claim .claim-text").evaluate(
        "e => parseFloat(getComputedStyle(e).fontSize)"
    )
    assert size >= 28, f"the claim is {size}px on the projector"
    ARTIFACTS.mkdir(exist_ok=True)
    projector.screenshot(path=str(ARTIFACTS / "workshop-projector.png"))
    assert serious_violations(projector) == []
    for page in (projector, bo, console):
        expect(page.locator("#ws-claimtimer")).to_have_text(
            "Time is up: votes are closed.", timeout=10_000
        )
    expect(bo.locator(".vote-buttons")).to_be_hidden()
    expect(dee.locator(".vote-buttons")).to_be_hidden()
    console.click("button.reveal-btn")
    expect(claim).to_have_attribute("data-state", "revealed")
    expect(claim.locator(".verdict")).to_contain_text("The answer:")
    expect(claim).to_contain_text(f"{HOLDS}: 2 (50%)")
    expect(claim).to_contain_text(f"{COSTS}: 2 (50%)")
    # Each seat is told how its own vote did; the projector, nobody's.
    for name, page in people.items():
        mine = page.locator("#ws-myclaim.mine")
        if name in chosen:
            verdict = "right" if chosen[name] == right else "not this time"
            expect(mine).to_have_text(f"You voted {chosen[name]}: {verdict}.")
        else:
            expect(mine).to_have_text("You did not vote on this claim.")
    assert projector.locator("#ws-myclaim.mine").count() == 0

    # An answer round: everyone writes first, the tiers come after, a few answers go up
    # on the projector without names.
    console.fill("#answers-seconds", "6")
    console.click("button.answers-start")
    for page in (ana, bo):
        expect(page.locator("#ws-answers")).to_have_attribute("data-state", "open")
    ana.fill("#answer-text", "Make the handler idempotent")
    ana.click("form.answer-form button[type=submit]")
    bo.fill("#answer-text", "<i>retry</i> with backoff")
    bo.click("form.answer-form button[type=submit]")
    for page in (ana, bo):
        expect(page.locator("#ws-myanswer")).to_contain_text("Your answer is in")
    expect(projector.locator("#ws-answercount")).to_have_text("2 answers in")
    assert serious_violations(ana) == []
    expect(projector.locator("#ws-stage")).to_have_attribute("data-tier", "prompt")
    assert projector.locator(".tier-answer").count() == 0

    # While the room writes, the instructor finds Eve in the moderation panel and removes
    # her: her page says so, her socket is closed, and the room counts four.
    console.fill("#seat-q", "Eve")
    eve_row = console.locator("#ws-seat-rows li", has=console.locator(".seat-name", has_text="Eve"))
    expect(eve_row).to_have_count(1)
    console.once("dialog", lambda dialog: dialog.accept())  # hx-confirm's "Remove Eve…?"
    eve_row.locator("button.danger").click()
    expect(eve_row).to_have_class("removed")
    expect(eve_row.locator(".tag")).to_have_text("removed")
    expect(eve.locator("#removed-h")).to_have_text("You were removed from this room")
    expect(eve.locator("#ws-claim")).to_have_count(0)
    for page in (projector, console):
        expect(page.locator("#ws-presence")).to_have_text("4 connected")
    expect(seats).to_have_text("4 joined")
    expect(console.locator("#ws-seats li")).to_have_text(["Ana", "Bo", "Chidi", "Dee"])
    seated = {name: page for name, page in people.items() if name != "Eve"}

    # The round closes on time; the tiers and a few answers follow.
    expect(ana.locator("#ws-answertimer")).to_have_text(
        "Time is up: answers are closed.", timeout=10_000
    )
    expect(ana.locator("form.answer-form")).to_be_hidden()
    console.click("button.answers-end")
    for page in (projector, ana, bo):
        expect(page.locator("#ws-stage")).to_have_attribute("data-tier", "basics")
    expect(projector.locator(".tier-answer")).to_be_visible()
    console.locator("button.answer-show").nth(1).click()
    shown = projector.locator(".shown-answer")
    expect(shown).to_have_text(["<i>retry</i> with backoff"])
    assert projector.locator(".shown-answer i").count() == 0  # shown as text, escaped
    console.locator("button.answer-show").nth(0).click()
    expect(shown).to_have_count(2)
    # The answers are the newest thing: the finished claim steps aside for them.
    expect(claim).to_be_hidden()
    _above_the_fold(projector, ".shown-answer")
    for name in people:
        expect(projector.locator("#ws-answers")).not_to_contain_text(re.compile(rf"\b{name}\b"))
    projector.screenshot(path=str(ARTIFACTS / "workshop-projector-answers.png"))

    # A shared run with the spread kept from the room: the console sees how the guesses
    # spread, the projector only how many are in, the phones neither, until the instructor
    # shows it (and hides it again).
    console.locator("details.run-open").evaluate("d => d.open = true")
    console.select_option("#run-lane", "redis-short")
    console.fill("#run-count", "3")
    console.fill("#run-countdown", "1")
    console.select_option("#run-metric", "receipts")
    console.click("form.run-form button[type=submit]")
    toggle = console.locator("#ws-spreadtoggle")
    expect(toggle.locator("button.spread-btn")).to_have_text("Show the spread on the projector")
    guesses = {"Ana": 3, "Bo": 6, "Chidi": 2, "Dee": 4}
    for name, page in seated.items():
        page.fill("#pred-value", str(guesses[name]))
        page.click("form.predict button[type=submit]")
    for name, page in seated.items():
        mine = page.locator("#ws-myprediction")
        expect(mine).to_contain_text(f"Your prediction: {guesses[name]}")
    spread_line = "4 predictions: from 2 to 6, median 3.5"
    expect(console.locator("#ws-spread")).to_contain_text(spread_line)
    expect(console.locator("#ws-spread .spread-bars li")).to_have_count(4)
    spread = projector.locator("#ws-spread")
    hidden_line = "4 predictions in. The spread stays hidden, so nobody anchors on it."
    expect(spread).to_have_text(hidden_line)
    expect(spread).to_have_class(re.compile(r"\bspread-hidden\b"))
    assert projector.locator("#ws-spread .spread-bars").count() == 0
    for page in seated.values():
        assert page.locator("#ws-spread, .spread-bars").count() == 0
        expect(page.locator("#ws-run")).not_to_contain_text("median")
    toggle.locator("button.spread-btn").click()
    expect(spread).to_contain_text(spread_line)
    expect(projector.locator("#ws-spread .spread-bars li")).to_have_count(4)
    expect(toggle.locator("button.spread-btn")).to_have_text("Hide the spread from the projector")
    for page in seated.values():
        assert page.locator("#ws-spread, .spread-bars").count() == 0
    toggle.locator("button.spread-btn").click()
    expect(spread).to_have_text(hidden_line)
    assert projector.locator("#ws-spread .spread-bars").count() == 0

    # Fired: every screen watches the receipts come in, and the outcome is stored.
    console.click("button.fire-btn")
    watching = [console, projector, *seated.values()]
    for page in watching:
        expect(page.locator("#ws-run")).to_have_attribute("data-state", re.compile("fired|done"))
        expect(page.locator("#receipts-body tr")).to_have_count(3, timeout=20_000)
        expect(page.locator("#receipts-body td.outcome.executed")).to_have_count(3)
        expect(page.locator('#counters [data-counter="receipts"]')).to_have_text("3")
    for page in watching:
        expect(page.locator("#ws-outcome .observed")).to_have_text("3", timeout=30_000)
        expect(page.locator("#ws-outcome .closest")).to_have_text("Closest: Ana")
    # Each seat's own guess and place, marked as its own; the big screen has no "you".
    places = {
        "Ana": "1st of 4, the closest",
        "Bo": "4th of 4",
        "Chidi": "2nd of 4",
        "Dee": "2nd of 4",
    }
    for name, page in seated.items():
        mine = page.locator("#ws-myresult.mine")
        off = abs(guesses[name] - 3)
        expect(mine).to_contain_text(
            f"Your prediction: {guesses[name]}; the run showed 3, so you were off by {off}."
        )
        expect(mine).to_contain_text(f"Your place: {places[name]}.")
        expect(page.locator("#ws-myprediction")).to_have_text(f"Your prediction: {guesses[name]}.")
    assert projector.locator("#ws-myresult.mine, .you").count() == 0
    wide = ana.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert wide <= 0, f"the phone scrolls sideways by {wide}px"
    ana.screenshot(path=str(ARTIFACTS / "workshop-phone-outcome.png"), full_page=True)

    # The exports: one row per participant per item (Eve's vote kept, marked removed), the
    # typed answers, the claim's summary, the run's guesses and the leaderboard of those
    # still seated.
    answers = _csv(console, base, code, "answers")
    assert len(answers) == 5 * 3
    assert [r["nickname"] for r in answers] == [*people, *people, *people]
    by = {(r["nickname"], r["kind"]): r for r in answers}
    typed = {
        name: (by[(name, "answer")]["answer"], by[(name, "answer")]["on_screen"]) for name in people
    }
    assert typed == {
        "Ana": ("Make the handler idempotent", "yes"),
        "Bo": ("<i>retry</i> with backoff", "yes"),
        "Chidi": ("", ""),
        "Dee": ("", ""),
        "Eve": ("", ""),
    }
    for name in people:
        vote, guess = by[(name, "claim")], by[(name, "run")]
        assert (vote["item"], by[(name, "answer")]["item"], guess["item"]) == ("1", "2", "3")
        assert vote["removed"] == guess["removed"] == ("yes" if name == "Eve" else "no")
        assert vote["right_answer"] == right and guess["right_answer"] == "3"
        if name in chosen:
            assert vote["answer"] == chosen[name], name
            assert vote["correct"] == ("yes" if chosen[name] == right else "no"), name
            assert vote["score"] == ("1" if chosen[name] == right else "0"), name
        else:
            assert vote["answer"] == vote["correct"] == vote["answered_at (UTC)"] == "", name
        if name in guesses:
            assert guess["answer"] == str(guesses[name]), name
            assert guess["off_by"] == str(abs(guesses[name] - 3)), name
            assert guess["correct"] == ("yes" if guesses[name] == 3 else "no"), name
        else:
            assert guess["answer"] == guess["correct"] == guess["off_by"] == "", name
    (claim_row,) = _csv(console, base, code, "claims")
    summary = {k: claim_row[k] for k in ("answer", "holds", "costs", "answered", "right")}
    assert summary == {
        "answer": right.lower(),
        "holds": "2",
        "costs": "2",
        "answered": "4",
        "right": "2",
    }
    # Dee, still seated and present (she guessed later), never voted; Eve voted before she
    # was removed.
    assert (claim_row["present"], claim_row["unanswered"], claim_row["right_pct"]) == (
        "4",
        "1",
        "50",
    )
    (run_row,) = _csv(console, base, code, "runs")
    assert (run_row["predictions"], run_row["predicted"]) == ("4", "2 3 4 6")
    assert (run_row["observed"], run_row["closest"], run_row["metric"]) == ("3", "Ana", "receipts")
    scores = _csv(console, base, code, "scores")
    assert sorted(r["nickname"] for r in scores) == ["Ana", "Bo", "Chidi", "Dee"]

    # Nothing logged an error on either big screen through the whole session, the run included
    # (issue 28's walk: CSP inline-style errors on the console, htmx:oobErrorNoTarget on the
    # projector).
    assert console_errors == [], console_errors
    assert projector_errors == [], projector_errors
    for page in (*people.values(), projector, console):
        page.context.close()

"""The quiz in Chromium on the real lessons: miss a claim on purpose, retry it, find it on
the review page; and axe-core finds nothing serious on the quiz, review and progress pages."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.utils import timezone
from playwright.sync_api import expect

from lessons.catalog import all_questions

pytestmark = pytest.mark.browser


def serious_violations(page) -> list[str]:
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v["impact"] in {"serious", "critical"}
    ]


def shown_keys(page) -> list[str]:
    return page.locator("li.quiz-item").evaluate_all("items => items.map(i => i.dataset.key)")


def answer_every_item(page, claims_by_key: dict, miss: int = 0) -> list:
    """Answer the attempt on screen, wrong for the first `miss` claims that cost the
    question, right for the rest; the claims missed, in page order."""
    missed = []
    items = page.locator("li.quiz-item")
    for number in range(1, items.count() + 1):
        item = page.locator(f"#item-{number}")
        claim = claims_by_key[item.get_attribute("data-key")]
        wrong = not claim.holds and len(missed) < miss
        says_holds = claim.holds != wrong
        item.get_by_role(
            "button", name="Holds up" if says_holds else "Costs you the question"
        ).click()
        verdict = item.locator(".verdict")
        expect(verdict).to_contain_text("Not right." if wrong else "Right.")
        if wrong:
            missed.append(claim)
    return missed


def test_take_a_quiz_miss_a_claim_retry_it_and_find_it_on_the_review_page(page, live_server_url):
    question = all_questions()[0]
    claims_by_key = {c.key: c for c in question.claims}
    total = len(question.claims)

    page.goto(f"{live_server_url}/quiz/")
    page.get_by_role("button", name=f"Quiz me on “{question.title}”").click()
    expect(page).to_have_url(re.compile(r"/quiz/a/\d+/$"))
    attempt_url = page.url
    expect(page.locator("li.quiz-item")).to_have_count(total)
    order = shown_keys(page)
    assert sorted(order) == sorted(claims_by_key)

    [missed] = answer_every_item(page, claims_by_key, miss=1)
    # htmx swapped each answer in place: still the attempt page, the tally kept up.
    assert page.url == attempt_url
    expect(page.locator("#quiz-tally")).to_contain_text(
        f"Answered {total} of {total}, {total - 1} right."
    )
    first_item = page.locator("#item-1")
    expect(first_item.get_by_role("link", name=re.compile(r"^Read the \w+ answer"))).to_be_visible()

    page.reload()  # the order is fixed for the attempt, and answers stay answered
    assert shown_keys(page) == order
    expect(page.locator("li.quiz-item.is-answered")).to_have_count(total)

    page.get_by_role("link", name="See your score").first.click()
    expect(page.locator("#quiz-score")).to_contain_text(
        f"{total - 1} right out of {total} answered"
    )
    missed_section = page.locator("section", has=page.locator("#missed-heading"))
    expect(missed_section.locator("li.quiz-item")).to_have_count(1)
    expect(missed_section.locator(f'[data-key="{missed.key}"]')).to_contain_text("What is true:")

    page.get_by_role("link", name="What is due for review").click()
    expect(page.locator(f'#due-claims [data-key="{missed.key}"]')).to_be_visible()
    page.go_back()

    page.get_by_role("button", name="Retry what I missed (1)").click()
    expect(page.locator("li.quiz-item")).to_have_count(1)
    expect(page.locator("#item-1")).to_have_attribute("data-key", missed.key)
    answer_every_item(page, claims_by_key, miss=0)

    page.get_by_role("link", name="Review").first.click()
    expect(page).to_have_url(f"{live_server_url}/review/")
    tomorrow = page.locator(f'#upcoming [data-key="{missed.key}"]')
    expect(tomorrow).to_contain_text("Tomorrow")
    known = next(c for c in question.claims if c.key != missed.key)
    in_four_days = timezone.localdate() + dt.timedelta(days=4)
    expect(page.locator(f'#upcoming [data-key="{known.key}"]')).to_have_attribute(
        "data-due", in_four_days.isoformat()
    )


def test_a_mixed_quiz_works_on_a_phone_sized_screen(browser, live_server_url):
    context = browser.new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    try:
        page.goto(f"{live_server_url}/quiz/")
        page.get_by_role("button", name="Start a mixed quiz").click()
        expect(page).to_have_url(re.compile(r"/quiz/a/\d+/$"))
        item = page.locator("#item-1")
        item.get_by_role("button", name="Costs you the question").click()
        expect(item.locator(".verdict")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        context.close()


def test_quiz_review_and_progress_pages_have_no_serious_accessibility_violations(
    page, live_server_url
):
    question = all_questions()[0]
    page.goto(f"{live_server_url}/quiz/")
    assert serious_violations(page) == [], "quiz index"
    page.get_by_role("button", name=f"Quiz me on “{question.title}”").click()
    expect(page).to_have_url(re.compile(r"/quiz/a/\d+/$"))
    assert serious_violations(page) == [], "fresh attempt"
    claims_by_key = {c.key: c for c in question.claims}
    answer_every_item(page, claims_by_key, miss=2)
    assert serious_violations(page) == [], "attempt with feedback"
    page.get_by_role("link", name="See your score").first.click()
    assert serious_violations(page) == [], "score"
    for path in (
        "/review/",
        "/progress/",
        "/progress/reset/",
        "/accounts/login/",
        "/accounts/signup/",
    ):
        page.goto(f"{live_server_url}{path}")
        assert serious_violations(page) == [], path


def test_rating_a_revealed_tier_as_missed_puts_the_question_on_the_review_page(
    page, live_server_url
):
    question = all_questions()[-1]
    page.goto(f"{live_server_url}/q/{question.slug}/basics/")
    rating = page.locator("#self-rating-basics")
    rating.get_by_role("button", name="Missed it").click()
    expect(rating.get_by_role("status")).to_contain_text("Saved: missed it")
    expect(rating.get_by_role("button", name="Missed it")).to_have_attribute("aria-pressed", "true")

    page.goto(f"{live_server_url}/review/")
    expect(page.locator(f'#due-questions [data-key="{question.slug}"]')).to_contain_text(
        question.title
    )
    page.goto(f"{live_server_url}/progress/")
    row = page.locator(f"#progress-{question.slug}")
    expect(row).to_contain_text("Missed it (basics)")
    expect(row).to_contain_text("basics")


def test_simultaneous_submits_of_one_item_count_once(page, live_server_url):
    """Four POSTs of the same item at once, two saying each answer, through the real server:
    all get an answer back, one is stored, and the page counts one."""
    question = all_questions()[0]
    page.goto(f"{live_server_url}/quiz/")
    page.get_by_role("button", name=f"Quiz me on “{question.title}”").click()
    expect(page).to_have_url(re.compile(r"/quiz/a/\d+/$"))
    key = page.locator("#item-1").get_attribute("data-key")
    statuses = page.evaluate(
        """async ([url, key]) => {
            const token = JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"];
            const send = (answer) => {
                const body = new FormData();
                body.append("claim", key);
                body.append("answer", answer);
                return fetch(url, {method: "POST", body,
                    headers: {"X-CSRFToken": token, "HX-Request": "true"}}).then(r => r.status);
            };
            return Promise.all([send("costs"), send("holds"), send("costs"), send("holds")]);
        }""",
        [page.url + "answer/", key],
    )
    assert statuses == [200, 200, 200, 200]
    page.reload()
    expect(page.locator("#quiz-tally")).to_contain_text(f"Answered 1 of {len(question.claims)}")
    expect(page.locator("li.quiz-item.is-answered")).to_have_count(1)
    page.goto(f"{live_server_url}/progress/")
    expect(page.locator(f"#progress-{question.slug}")).to_contain_text(
        re.compile(r"Quiz accuracy\s*(0|100)% \((0|1) of 1\)")
    )


def test_refused_and_failed_answers_show_a_clear_message_on_the_quiz_page(page, live_server_url):
    first, other = all_questions()[0], all_questions()[1]
    page.goto(f"{live_server_url}/quiz/")
    page.get_by_role("button", name=f"Quiz me on “{first.title}”").click()
    expect(page).to_have_url(re.compile(r"/quiz/a/\d+/$"))
    problem = page.locator("#quiz-problem")

    # A claim from another question, as a tampered form would send it: a 400 fragment.
    page.locator("#item-1 input[name=claim]").evaluate(
        "(input, key) => { input.value = key; }", other.claims[0].key
    )
    page.locator("#item-1").get_by_role("button", name="Holds up").click()
    expect(problem).to_have_text("That claim is not part of this quiz attempt.")

    # A stale CSRF token (say, a session that expired): Django's 403, still explained.
    page.evaluate("""() => document.body.setAttribute("hx-headers", '{"X-CSRFToken": "stale"}')""")
    page.locator("#item-2 input[name=csrfmiddlewaretoken]").evaluate("i => i.remove()")
    page.locator("#item-2").get_by_role("button", name="Holds up").click()
    expect(problem).to_contain_text("did not go through (error 403)")
    page.reload()
    expect(page.locator("li.quiz-item.is-answered")).to_have_count(0)


def test_an_answer_that_goes_through_clears_an_earlier_refusal(page, live_server_url):
    first, other = all_questions()[0], all_questions()[1]
    page.goto(f"{live_server_url}/quiz/")
    page.get_by_role("button", name=f"Quiz me on “{first.title}”").click()
    expect(page).to_have_url(re.compile(r"/quiz/a/\d+/$"))
    page.locator("#item-1 input[name=claim]").evaluate(
        "(input, key) => { input.value = key; }", other.claims[0].key
    )
    page.locator("#item-1").get_by_role("button", name="Holds up").click()
    expect(page.locator("#quiz-problem")).to_have_text(
        "That claim is not part of this quiz attempt."
    )

    page.locator("#item-2").get_by_role("button", name="Holds up").click()

    expect(page.locator("#item-2 .verdict")).to_be_visible()
    expect(page.locator("#quiz-problem")).to_be_empty()
    expect(page.locator("#quiz-problem")).to_be_hidden()


def test_quiz_feedback_shows_how_we_know_on_a_phone_and_links_the_experiment(
    browser, live_server_url
):
    """After answering, the claim's "How we know" opens inside the feedback, fits 375 px,
    scans clean, and its "Run the experiment" link opens that experiment's lab page."""
    question, claim = next(
        (q, c)
        for q in all_questions()
        for c in q.claims
        if any(e.kind == "experiment" for e in c.evidence)
    )
    slug = next(e.experiment for e in claim.evidence if e.kind == "experiment")
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    page = context.new_page()
    try:
        page.goto(f"{live_server_url}/quiz/")
        page.get_by_role("button", name=f"Quiz me on “{question.title}”").click()
        expect(page).to_have_url(re.compile(r"/quiz/a/\d+/$"))
        item = page.locator(f'li.quiz-item[data-key="{claim.key}"]')
        item.get_by_role("button", name="Holds up").click()
        disclosure = item.locator("details.how-we-know")
        disclosure.locator("summary").click()
        expect(disclosure.locator(".checked-against")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        assert serious_violations(page) == []
        disclosure.get_by_role("link", name=re.compile("^Run the experiment")).first.click()
        expect(page).to_have_url(f"{live_server_url}/lab/experiments/{slug}/")
    finally:
        context.close()

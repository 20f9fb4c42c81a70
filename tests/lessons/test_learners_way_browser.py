"""Issue 29's "done when", walked in Chromium on the real lessons as a new learner would: from
the home page to the last course step using only Next; a glossary term opened from its first use
on a question page and from the lab's run form; "prefetch" searched from the header, landing on
its tier; a measurement note, a seed's case study and a source view opened from "How we know".

The rest of it has tests of its own: the same walk by the `n` key alone is
tests/lessons/test_course_order.py::test_the_n_key_alone_follows_the_course_from_home_to_the_last_step;
the worker panel counting two copies of one task on one worker runs real workers
(tests/lab/test_holders_browser.py); axe in light and dark on a desktop and a phone is
tests/lessons/test_themes_browser.py."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from lessons.course import course_order
from tests.lessons.test_evidence_browser import QUESTION, open_from_how_we_know
from tests.lessons.test_search_browser import search_prefetch_from_the_header

pytestmark = pytest.mark.browser


def test_the_course_by_next_a_term_a_search_and_the_evidence(page, live_server_url):
    base = live_server_url
    course = [q.slug for q in course_order()]
    page.goto(f"{base}/")
    page.locator("#start-here-link").click()
    seen = [course[0]]
    expect(page).to_have_url(f"{base}/q/{course[0]}/")
    next_link = page.locator('.question-nav a[rel="next"]')
    while next_link.count() and len(seen) <= len(course):
        next_link.click()
        expect(page).not_to_have_url(f"{base}/q/{seen[-1]}/")
        page.wait_for_load_state("domcontentloaded")
        seen.append(page.locator("#question").get_attribute("data-slug"))
    assert seen == course
    expect(page.get_by_text("This is the last step of the course path.")).to_be_visible()

    # A term at its first use on a question page opens in place, then on the glossary.
    page.goto(f"{base}/q/{course[0]}/")
    term = page.locator("button.term").first
    definition = page.locator(f"#{term.get_attribute('popovertarget')}")
    term.click()
    expect(definition).to_be_visible()
    more = definition.get_by_role("link", name=re.compile("^More about"))
    slug = more.get_attribute("href").removeprefix("/glossary/#")
    more.click()
    expect(page).to_have_url(f"{base}/glossary/#{slug}")
    expect(page.locator(f"#{slug}")).to_be_in_viewport()

    # The lab's form defines "receipt" before it asks for a prediction of them.
    page.goto(f"{base}/lab/")
    page.locator(".terms-defined").get_by_role("link", name="More about receipt").click()
    expect(page).to_have_url(f"{base}/glossary/#receipt")
    expect(page.locator("#receipt")).to_be_in_viewport()

    search_prefetch_from_the_header(page, base)

    page.goto(f"{base}{QUESTION}")
    open_from_how_we_know(page, 'a[href^="/evidence/notes/"]')
    expect(page).to_have_url(re.compile(r"/evidence/notes/\d+/$"))
    expect(page.get_by_role("heading", name="The command that was run")).to_be_visible()
    page.goto(f"{base}{QUESTION}")
    open_from_how_we_know(page, 'a[href^="/evidence/cases/"]')
    expect(page).to_have_url(re.compile(r"/evidence/cases/[\w-]+/$"))
    expect(page.locator(".cited-passage").first).to_contain_text("In the case’s own words:")
    page.goto(f"{base}{QUESTION}")
    open_from_how_we_know(page, 'a[href^="/evidence/source/"]')
    expect(page).to_have_url(re.compile(r"/evidence/source/[\w.]+/[\w.]+/$"))
    expect(page.locator(".source-code .hll").first).to_be_visible()

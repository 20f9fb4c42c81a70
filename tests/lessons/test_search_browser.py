"""Search from the keyboard in Chromium: `/` focuses the header's box on any page (but is a
plain character while typing in a field), "prefetch" finds the tier that explains it, and its
link opens the question with that tier revealed and on screen; a claim's result opens at the
claim, its tier's list of claims unfolded."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from lessons.catalog import all_questions
from tests.lessons.test_accessibility import serious_violations

pytestmark = pytest.mark.browser


def search_prefetch_from_the_header(page, base: str) -> str:
    """Press `/`, type "prefetch", Enter, follow the best tier's result; returns that tier,
    checked to be revealed, on screen and about prefetch."""
    box = page.locator("#site-search")
    expect(box).not_to_be_focused()
    page.keyboard.press("/")
    expect(box).to_be_focused()
    expect(box).to_have_value("")  # the key focused the box; it did not type a slash
    page.keyboard.type("prefetch")
    page.keyboard.press("Enter")

    expect(page).to_have_url(f"{base}/search/?q=prefetch")
    expect(page.locator("#search-count")).to_contain_text("for “prefetch”")
    hit = page.locator(".search-hit-tier").first
    expect(hit.locator("mark").first).to_have_text(re.compile("prefetch", re.I))
    link = hit.get_by_role("link")
    href = link.get_attribute("href")
    slug, tier = re.fullmatch(r"/q/([\w-]+)/(basics|solid|senior)/#tier-\2", href).groups()
    link.click()

    expect(page).to_have_url(f"{base}/q/{slug}/{tier}/#tier-{tier}")
    section = page.locator(f"#tier-{tier}")
    expect(section).to_be_visible()
    expect(section.locator(f"#tier-{tier}-heading")).to_be_in_viewport()
    expect(section.locator(":scope > .prose")).to_contain_text("prefetch")
    return tier


def test_slash_then_prefetch_lands_on_the_matching_tier(page, live_server_url):
    page.goto(f"{live_server_url}/lab/")
    tier = search_prefetch_from_the_header(page, live_server_url)
    # an opened tier is revealed on the page, the one after it is not
    later = {"basics": "solid", "solid": "senior"}.get(tier)
    if later:
        expect(page.locator(f"#tier-{later}")).to_have_count(0)


def test_a_claim_found_opens_at_that_claim(page, live_server_url):
    question = all_questions()[0]
    claim = question.claims_cost[0]
    words = " ".join(claim.text.split()[:8])
    page.goto(f"{live_server_url}/search/?q={words}")
    hit = page.locator(".search-hit-claim").filter(has_text=question.title).first
    hit.get_by_role("link").click()

    expect(page).to_have_url(f"{live_server_url}/q/{question.slug}/{claim.tier}/#claim-{claim.id}")
    shown = page.locator(f"#claim-{claim.id}")
    expect(shown).to_be_visible()  # its tier's closed list of claims was opened for it
    expect(shown).to_be_in_viewport()
    expect(shown.locator(".verdict")).to_have_text("It costs you the question.")
    expect(shown.get_by_text("How we know")).to_be_visible()


def test_slash_is_typed_when_a_field_has_focus(page, live_server_url):
    page.goto(f"{live_server_url}/search/?q=prefetch")
    field = page.locator("#search-q")
    field.click()
    field.press("End")
    page.keyboard.type("/x")
    expect(field).to_have_value("prefetch/x")
    expect(page.locator("#site-search")).not_to_be_focused()


@pytest.mark.parametrize("query", ["prefetch", "%22NEAR*", "zzzqqxnotaword"])
def test_search_pages_have_no_serious_accessibility_violations(page, live_server_url, query):
    page.goto(f"{live_server_url}/search/?q={query}")
    assert serious_violations(page) == []

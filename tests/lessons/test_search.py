"""Search over the content with the database's own full-text index (PostgreSQL's text search,
SQLite's FTS5): every kind of entry is found and links to where it is shown, a tier at its
permalink and heading, a claim at its tier's permalink and its own anchor; whatever is typed,
including FTS syntax, gets results or a message and never an error; the index follows the
content; the header's box is on every page.
This file is in scripts/test's SQLite smoke subset, so both databases run it."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lessons.catalog import all_questions
from lessons.models import SearchEntry
from lessons.search import MAX_CHARS, search, search_words
from tests.lessons.lessonfiles import FIXTURES

pytestmark = pytest.mark.django_db
TIER_LINK = re.compile(r"^/q/([\w-]+)/(basics|solid|senior)/#tier-\2$")
CLAIM_LINK = re.compile(r"^/q/([\w-]+)/(basics|solid|senior)/#claim-[\w-]+$")


def test_prefetch_finds_a_tier_that_explains_it_linked_at_that_tier():
    hits = search("prefetch").hits
    tiers = [h for h in hits if h.kind == "tier"]
    assert tiers, [h.url for h in hits]
    slug, tier = TIER_LINK.match(tiers[0].url).groups()
    question = next(q for q in all_questions() if q.slug == slug)
    assert "prefetch" in question.tiers[tier].lower()
    assert "<mark>prefetch</mark>" in tiers[0].excerpt.lower()
    assert tiers[0].belongs_to == question.title


def test_each_kind_of_content_is_found_and_links_to_where_it_is_shown():
    kinds: dict[str, str] = {}
    for hit in search("prefetch").hits:
        kinds.setdefault(hit.kind, hit.url)  # the best of each kind
    assert kinds["term"] == "/glossary/#prefetch"
    assert kinds["experiment"] == "/lab/experiments/quorum-direct-prefetch/"
    assert CLAIM_LINK.match(kinds["claim"]), kinds["claim"]

    question = all_questions()[0]
    found = {h.url: h for h in search(question.title).hits}
    assert found[f"/q/{question.slug}/"].kind == "question"


def test_a_claim_opens_its_question_at_the_tier_it_belongs_to_at_the_claim(client):
    question = all_questions()[0]
    claim = question.claims_cost[0]
    hits = search(" ".join(claim.text.split()[:8])).hits
    hit = next(h for h in hits if h.kind == "claim" and question.title in h.belongs_to)
    assert hit.url == f"/q/{question.slug}/{claim.tier}/#claim-{claim.id}"
    page = client.get(hit.url.split("#")[0]).content.decode()
    shown = page[page.index(f'id="claim-{claim.id}"') :]
    assert shown.index("It costs you the question.") < shown.index("</li>")


def test_words_are_stemmed_by_the_database():
    assert {h.url for h in search("prefetching").hits} & {"/glossary/#prefetch"}
    assert search("prefetched").hits


def test_every_word_must_match():
    assert search("prefetch").hits
    assert search("prefetch zzzqqxnotaword").hits == []


@pytest.mark.parametrize(
    "typed",
    [
        '"',
        '"prefetch',
        "prefetch NEAR",
        "NEAR(prefetch visibility, 2)",
        "prefetch*",
        "*",
        "title:prefetch",
        "prefetch AND OR NOT",
        "-prefetch",
        "(prefetch",
        "^prefetch",
        "prefetch\x00",
        "préfetch ünïcode ∑",
    ],
)
def test_search_syntax_is_only_characters(client, typed):
    response = client.get("/search/", {"q": typed})
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="search-message"' in page or 'id="search-count"' in page


SYNTAX = ['"', "*", "NEAR", "AND", "OR", "NOT", "(", ")", ":", "^", "-", "+", "{", "}", "\x00"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    typed=st.text(max_size=240)
    | st.lists(st.sampled_from([*SYNTAX, "prefetch", "timeout", "acks_late"]), max_size=16).map(
        " ".join
    )
)
def test_any_text_gets_hits_or_a_message_from_the_database(typed):
    outcome = search(typed)  # an FTS5 or tsquery syntax error would raise here
    assert bool(outcome.message) != bool(outcome.words)
    assert all(TIER_LINK.match(h.url) for h in outcome.hits if h.kind == "tier")
    assert all(CLAIM_LINK.match(h.url) for h in outcome.hits if h.kind == "claim")


def test_prefetch_with_operators_finds_what_prefetch_finds():
    plain = [h.url for h in search("prefetch").hits]
    assert [h.url for h in search('"prefetch*').hits] == plain
    assert [h.url for h in search("prefetch NEAR").hits] == [
        h.url for h in search("prefetch near").hits
    ]


@pytest.mark.parametrize(
    "typed, says",
    [
        ("", "Type a word"),
        ("   ", "Type a word"),
        ("?!*\"'()", "no word to search for"),
        ("the of and", "no word to search for"),
        ("x" * (MAX_CHARS + 1), f"{MAX_CHARS + 1} characters long"),
        (" ".join(f"w{i}" for i in range(40)), "That is 40 words"),
    ],
)
def test_empty_or_absurd_searches_get_a_message(client, typed, says):
    response = client.get("/search/", {"q": typed})
    assert response.status_code == 200
    message = re.search(r'id="search-message">([^<]*)<', response.content.decode())
    assert message and says in message.group(1), response.content.decode()[-2000:]


def test_search_words_drop_punctuation_and_common_words():
    assert search_words('"visibility timeout" NEAR the *acks_late') == (
        ["visibility", "timeout", "NEAR", "acks_late"],
        "",
    )


def test_the_results_page_lists_hits_as_links(client):
    page = client.get("/search/", {"q": "prefetch"}).content.decode()
    assert 'href="/glossary/#prefetch"' in page
    assert re.search(r'href="/q/[\w-]+/(basics|solid|senior)/#tier-\1"', page)
    assert 'value="prefetch"' in page


def test_the_results_page_has_no_inline_script_or_style(client):
    page = client.get("/search/", {"q": "prefetch"}).content.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)", page)
    assert "<style" not in page and " style=" not in page


@pytest.mark.parametrize("path", ["/", "/glossary/", "/search/", "/q/where-countdown-waits/"])
def test_every_page_has_the_header_search_box(client, path):
    page = client.get(path).content.decode()
    assert re.search(
        r'<form class="site-search" role="search" method="get" action="/search/"', page
    )
    assert 'id="site-search" name="q"' in page
    assert re.search(r'<script src="/static/js/search-key\.(\w+\.)?js" defer>', page)


def test_the_index_follows_the_content_it_was_made_from(settings):
    search("prefetch")
    real = set(SearchEntry.objects.values_list("corpus", flat=True))
    settings.LESSONS_DIR = FIXTURES
    settings.LESSONS_RECHECK_SECONDS = 0
    hits = search("countdown").hits
    assert any(h.url.startswith("/q/fixture-countdown/") for h in hits)
    assert not any(h.url.startswith("/q/where-countdown-waits/") for h in hits)
    corpora = set(SearchEntry.objects.values_list("corpus", flat=True))
    assert len(corpora) == 1 and not corpora & real  # the old corpus went


def test_the_databases_own_full_text_index_answers():
    search("prefetch")
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":  # FTS5 mirrors every entry
            cursor.execute("SELECT count(*) FROM lessons_searchentry_fts")
            assert cursor.fetchone()[0] == SearchEntry.objects.count()
            cursor.execute(
                "SELECT count(*) FROM lessons_searchentry_fts WHERE lessons_searchentry_fts "
                "MATCH 'prefetching'"
            )
        else:  # PostgreSQL's text search over each entry's stored tsvector
            assert not SearchEntry.objects.filter(document__isnull=True).exists()
            cursor.execute(
                "SELECT count(*) FROM lessons_searchentry "
                "WHERE document @@ plainto_tsquery('english', 'prefetching')"
            )
        assert cursor.fetchone()[0] > 3


def test_synclessons_fills_the_search_index():
    out = StringIO()
    call_command("synclessons", stdout=out)
    count = SearchEntry.objects.count()
    assert count > 50 and f"{count} search entries indexed" in out.getvalue()
    call_command("synclessons", stdout=StringIO())
    assert SearchEntry.objects.count() == count  # a second run adds nothing

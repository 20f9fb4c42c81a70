"""Search with the database's own full-text index: PostgreSQL's text search (english stemming,
title weighted over body, a stored tsvector under a GIN index, ts_headline for the excerpt) in production, SQLite's FTS5 (porter
stemming, bm25, snippet) locally. Both run offline.

What a learner types is never handed to either parser as syntax: it is cut into words, and
only the words are searched for, all of them (quotes, `*`, `NEAR`, `-` are just characters).
A query with no words, or far too long, gets a message instead of a search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import connection
from django.db.models import F
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from lessons.models import SearchEntry
from lessons.search_index import index_sync

MAX_CHARS = 200
MAX_WORDS = 12
LIMIT = 30
_WORD = re.compile(r"\w+")
# Words too common to search for; PostgreSQL's english configuration drops these (and more)
# itself, FTS5 has no such list, so both paths drop them here and agree.
STOPWORDS = frozenset(
    "a an and are as at be by do does for from how i in is it its of on or the to was what "
    "when where which who why with".split()
)
# Marks around matched words in an excerpt: private-use characters no content contains, so the
# excerpt can be escaped whole and the marks turned into <mark> after.
_OPEN, _CLOSE = "\ue000", "\ue001"


@dataclass(frozen=True)
class Hit:
    kind: str
    kind_label: str
    title: str
    belongs_to: str
    url: str
    excerpt: SafeString


@dataclass(frozen=True)
class Outcome:
    query: str
    words: list[str]
    hits: list[Hit]
    message: str  # why nothing was searched for; "" when it was


def search_words(raw: str) -> tuple[list[str], str]:
    """The words to search for, or none and a message saying why."""
    text = (raw or "").strip()
    if not text:
        return [], "Type a word or two to search for, such as “prefetch”."
    if len(text) > MAX_CHARS:
        return [], (
            f"That search is {len(text)} characters long. Search for a few words "
            f"(at most {MAX_CHARS} characters)."
        )
    words = [w for w in _WORD.findall(text) if w.casefold() not in STOPWORDS]
    if not words:
        return [], (
            "There is no word to search for in that: punctuation, search operators and very "
            "common words are left out. Try a word such as “prefetch”."
        )
    if len(words) > MAX_WORDS:
        return [], f"That is {len(words)} words. Search for at most {MAX_WORDS}."
    return words, ""


def excerpt_html(marked: str) -> SafeString:
    text = escape(marked or "")
    return mark_safe(text.replace(_OPEN, "<mark>").replace(_CLOSE, "</mark>"))  # noqa: S308 - escaped above


def _postgresql(corpus: str, words: list[str]) -> list[tuple[SearchEntry, str]]:
    from django.contrib.postgres.search import SearchHeadline, SearchQuery, SearchRank

    query = SearchQuery(" ".join(words), search_type="plain", config="english")
    rows = (
        SearchEntry.objects.filter(corpus=corpus)
        .filter(document=query)
        .annotate(rank=SearchRank(F("document"), query))
        .annotate(
            excerpt=SearchHeadline(
                "body",
                query,
                config="english",
                start_sel=_OPEN,
                stop_sel=_CLOSE,
                max_words=30,
                min_words=12,
            )
        )
        .order_by("-rank", "position")[:LIMIT]
    )
    return [(row, row.excerpt) for row in rows]


def _sqlite(corpus: str, words: list[str]) -> list[tuple[SearchEntry, str]]:
    match = " ".join('"' + w.replace('"', '""') + '"' for w in words)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT e.id, snippet(lessons_searchentry_fts, 1, %s, %s, '…', 30) "
            "FROM lessons_searchentry_fts JOIN lessons_searchentry e "
            "ON e.id = lessons_searchentry_fts.rowid AND e.key = lessons_searchentry_fts.key "
            "WHERE lessons_searchentry_fts MATCH %s AND e.corpus = %s "
            "ORDER BY bm25(lessons_searchentry_fts, 10.0, 1.0), e.position LIMIT %s",
            [_OPEN, _CLOSE, match, corpus, LIMIT],
        )
        found = cursor.fetchall()
    entries = SearchEntry.objects.in_bulk([row[0] for row in found])
    return [(entries[pk], excerpt) for pk, excerpt in found if pk in entries]


def search(raw: str) -> Outcome:
    """The hits for what the learner typed, best first, or a message."""
    words, message = search_words(raw)
    if not words:
        return Outcome(raw or "", [], [], message)
    corpus, _ = index_sync()
    backend = _postgresql if connection.vendor == "postgresql" else _sqlite
    hits = [
        Hit(
            kind=row.kind,
            kind_label=SearchEntry.Kind(row.kind).label,
            title=row.title,
            belongs_to=row.belongs_to,
            url=row.url,
            excerpt=excerpt_html(excerpt),
        )
        for row, excerpt in backend(corpus, words)
    ]
    return Outcome(raw, words, hits, "")

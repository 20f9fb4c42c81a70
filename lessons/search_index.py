"""What search looks through: the content as plain-text entries in the database, one per
question, answer tier, claim, lab experiment and glossary term, each with the link that opens
it (a tier or claim opens its question at that tier, revealed: the tier permalink, at the
tier's heading or at the claim among the tier's claims).

The entries are made from the same loaded content the pages show, and kept under a fingerprint
of that content (the corpus): `synclessons` fills them, and the first search after an edit
fills them again, so an instructor's change is searchable without a command.
"""

from __future__ import annotations

import hashlib
import html
import re
import threading
from dataclasses import astuple, dataclass

from django.db import connection, transaction
from django.urls import reverse
from django.utils.html import strip_tags

from lessons.models import SearchEntry
from lessons.pages import TIER_LABELS
from lessons.rendering import render_markdown
from lessons.schema import TIERS

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Entry:
    key: str
    kind: str
    title: str
    belongs_to: str
    body: str
    url: str


def plain(markdown_text: str) -> str:
    """Markdown as the words a reader sees: no tags, no entities, one space between words."""
    text = html.unescape(strip_tags(str(render_markdown(markdown_text or ""))))
    return _SPACE.sub(" ", text).strip()


def tier_url(slug: str, tier: str) -> str:
    """The tier's permalink (it reveals that tier and the ones before it) at its heading."""
    return reverse("lessons:tier", args=[slug, tier]) + f"#tier-{tier}"


def claim_url(claim) -> str:
    """The tier permalink at the claim itself, in the tier's list of claims."""
    return reverse("lessons:tier", args=[claim.question_slug, claim.tier]) + f"#claim-{claim.id}"


def question_entries(question) -> list[Entry]:
    q, slug = question, question.slug
    prose = [q.prompt, *(p.text for p in q.key_points)]
    prose += [f"{f.question} {f.answer}" for f in q.followups]
    prose += list(q.go_deeper.values())
    entries = [
        Entry(
            f"question:{slug}",
            SearchEntry.Kind.QUESTION,
            q.title,
            "",
            " ".join(plain(text) for text in prose),
            reverse("lessons:question", args=[slug]),
        )
    ]
    for tier in TIERS:
        samples = [f"{s.title} {s.caption} {s.code}" for s in q.samples_for(tier)]
        entries.append(
            Entry(
                f"tier:{slug}:{tier}",
                SearchEntry.Kind.TIER,
                f"{TIER_LABELS[tier]} answer",
                q.title,
                " ".join([plain(q.tiers[tier]), *samples]),
                tier_url(slug, tier),
            )
        )
    for claim in q.claims:
        verdict = "holds up" if claim.holds else "costs you the question"
        entries.append(
            Entry(
                f"claim:{claim.key}",
                SearchEntry.Kind.CLAIM,
                plain(claim.text),
                f"A claim that {verdict}, in the {claim.tier} answer of “{q.title}”",
                " ".join(plain(text) for text in (claim.why, claim.truth or "")),
                claim_url(claim),
            )
        )
    return entries


def experiment_entries(experiments) -> list[Entry]:
    return [
        Entry(
            f"experiment:{e.slug}",
            SearchEntry.Kind.EXPERIMENT,
            e.title,
            "",
            " ".join(
                plain(text)
                for text in (e.question, str(e.prediction.get("prompt") or ""), e.explanation)
            ),
            reverse("lab:experiments:detail", args=[e.slug]),
        )
        for e in experiments
    ]


def term_entries(terms) -> list[Entry]:
    return [
        Entry(
            f"term:{t.slug}",
            SearchEntry.Kind.TERM,
            t.term,
            "",
            " ".join(
                [", ".join(t.words + t.code), plain(t.short), plain(t.long), plain(t.in_the_lab)]
            ),
            reverse("lessons:glossary") + f"#{t.slug}",
        )
        for t in terms
    ]


def _experiments() -> tuple:
    try:
        from teachlab.lab.experiments.catalog import experiments_load

        return tuple(experiments_load())
    except Exception:  # a lab catalog mid-edit leaves experiments out, not search down
        return ()


_memo_lock = threading.Lock()
_memo: dict[str, tuple] = {}  # "last" -> (sources, entries, corpus)


def content_entries() -> tuple[list[Entry], str]:
    """Every entry and the corpus fingerprint; made again only when the loaded content is no
    longer the same objects (the loaders keep them until a file changes)."""
    from lessons.catalog import load_catalog
    from lessons.glossary import load_glossary

    sources = (load_catalog(), load_glossary(), *_experiments())
    last = _memo.get("last")
    if last is not None and len(last[0]) == len(sources):
        if all(a is b for a, b in zip(last[0], sources, strict=True)):
            return last[1], last[2]
    catalog, glossary, *experiments = sources
    entries = [e for q in catalog.questions for e in question_entries(q)]
    entries += experiment_entries(experiments) + term_entries(glossary.terms)
    digest = hashlib.sha256()
    for entry in entries:
        digest.update(repr(astuple(entry)).encode())
    corpus = digest.hexdigest()
    with _memo_lock:
        _memo["last"] = (sources, entries, corpus)
    return entries, corpus


def index_sync() -> tuple[str, int]:
    """Make sure the database holds the current corpus (and drop the others); returns the
    corpus and how many entries it has. Safe to run from several processes at once: the
    unique (corpus, key) makes a second writer's rows no-ops."""
    entries, corpus = content_entries()
    if SearchEntry.objects.filter(corpus=corpus).exists():
        return corpus, len(entries)
    with transaction.atomic():
        SearchEntry.objects.exclude(corpus=corpus).delete()
        SearchEntry.objects.bulk_create(
            [
                SearchEntry(corpus=corpus, position=i, **vars(entry))
                for i, entry in enumerate(entries)
            ],
            ignore_conflicts=True,
        )
        if connection.vendor == "sqlite":
            _fts_sync()
        elif connection.vendor == "postgresql":
            SearchEntry.objects.filter(corpus=corpus, document__isnull=True).update(
                document=document_vector()
            )
    return corpus, len(entries)


def document_vector():
    """PostgreSQL's tsvector of an entry: its title and what it belongs to weigh over its body."""
    from django.contrib.postgres.search import SearchVector

    title = SearchVector("title", "belongs_to", weight="A", config="english")
    return title + SearchVector("body", weight="B", config="english")


def _fts_sync() -> None:
    """Mirror the entries into SQLite's FTS5 table: drop rows with no entry of that id and key,
    add the entries it lacks."""
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM lessons_searchentry_fts WHERE NOT EXISTS (SELECT 1 FROM "
            "lessons_searchentry e WHERE e.id = lessons_searchentry_fts.rowid "
            "AND e.key = lessons_searchentry_fts.key)"
        )
        cursor.execute(
            "INSERT INTO lessons_searchentry_fts (rowid, title, body, key) "
            "SELECT e.id, e.title || ' ' || e.belongs_to, e.body, e.key "
            "FROM lessons_searchentry e "
            "WHERE e.id NOT IN (SELECT rowid FROM lessons_searchentry_fts)"
        )

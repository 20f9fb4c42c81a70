"""Marking the first use of each glossary term in a page's sanitised HTML.

The mark is a button that opens the term's one-line definition in place, as a popover
(`popovertarget`): it works by tap or keyboard without any script, and static/js/terms.js
only moves the open popover next to its button. The definition goes through the same
Markdown sanitiser as lesson text. Text inside links, code blocks, headings and buttons is
never marked; an inline `code` span is marked whole when it is exactly one of a term's
`code` spellings (`acks_late`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator

from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from lessons.glossary import Term
from lessons.rendering import render_inline_markdown

_TAG = re.compile(r"(<[^>]+>)")
_TAG_NAME = re.compile(r"</?([a-zA-Z0-9]+)")
# Never marked inside: a `code` span is marked whole (below) or not at all.
_SKIP = {"a", "code", "pre", "button", "h3", "h4", "h5", "h6", "summary", "kbd", "script", "style"}


def _word_pattern(terms: Iterable[Term]) -> re.Pattern | None:
    words = sorted({w for t in terms for w in t.words}, key=len, reverse=True)
    if not words:
        return None
    alternatives = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in words)
    return re.compile(rf"(?<![\w-])({alternatives})(?:s|es)?(?![\w-])", re.IGNORECASE)


class Words:
    """Finds the terms' `words` in plain text."""

    def __init__(self, terms: Iterable[Term]) -> None:
        self.terms = list(terms)
        self.by_word = {w.casefold(): t for t in self.terms for w in t.words}
        self.pattern = _word_pattern(self.terms)

    def matches(self, text: str) -> Iterator[tuple[re.Match, Term]]:
        for match in self.pattern.finditer(text) if self.pattern else ():
            term = self.by_word.get(" ".join(match.group(1).split()).casefold())
            if term is not None:
                yield match, term


def terms_in(text: str, terms: Iterable[Term]) -> list[Term]:
    """The terms `text` uses, in the order it first uses them."""
    found: list[Term] = []
    for _, term in Words(terms).matches(text):
        if term not in found:
            found.append(term)
    return found


def mark(inner: str, term: Term) -> str:
    """`inner` (already safe HTML) as a button opening the term's short definition."""
    target = f"term-{term.slug}"
    more = f"{reverse('lessons:glossary')}#{term.slug}"
    return (
        f'<button type="button" class="term" popovertarget="{target}">{inner}</button>'
        f'<span class="term-popover" id="{target}" popover>'
        f"<strong>{escape(term.term)}</strong>: {render_inline_markdown(term.short)} "
        f'<a href="{more}">More about {escape(term.term)}</a></span>'
    )


class Marker:
    """Marks each term once across the blocks of one page, in the order they are given."""

    def __init__(self, terms: Iterable[Term]) -> None:
        self.words = Words(terms)
        self.by_code = {c.casefold(): t for t in self.words.terms for c in t.code}
        self.marked: set[str] = set()

    def _text(self, text: str) -> str:
        out, last = [], 0
        for match, term in self.words.matches(text):
            if term.slug in self.marked:
                continue
            self.marked.add(term.slug)
            out += [text[last : match.start()], mark(match.group(0), term)]
            last = match.end()
        return "".join([*out, text[last:]])

    def __call__(self, fragment: str) -> SafeString:
        """`fragment` (sanitised HTML) with the terms not marked yet marked at first use."""
        tokens = _TAG.split(str(fragment))
        out: list[str] = []
        skip = 0
        i = 0
        while i < len(tokens):
            token = tokens[i]
            name_match = _TAG_NAME.match(token) if token.startswith("<") else None
            if name_match:
                name = name_match.group(1).lower()
                closing = token.startswith("</")
                if name == "code" and not closing and not skip and i + 2 < len(tokens):
                    term = self.by_code.get(html.unescape(tokens[i + 1]).strip().casefold())
                    if term and term.slug not in self.marked and tokens[i + 2] == "</code>":
                        self.marked.add(term.slug)
                        out.append(mark("".join(tokens[i : i + 3]), term))
                        i += 3
                        continue
                if name in _SKIP and not token.endswith("/>"):
                    skip += -1 if closing else 1
                    skip = max(skip, 0)
                out.append(token)
            elif skip or name_match is None and token.startswith("<"):
                out.append(token)
            else:
                out.append(self._text(token))
            i += 1
        return mark_safe("".join(out))  # noqa: S308 - sanitised input; marks are built from escaped parts

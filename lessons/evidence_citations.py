"""Which claims and key points cite a piece of evidence: a measurement note's page, a seed's
case study and a source view each list what they back, with a link to the question, so the
evidence leads back to the lesson as the lesson leads to it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from lessons.catalog import all_questions
from lessons.lesson import Evidence, Question


@dataclass(frozen=True)
class Citation:
    """One claim or key point citing the evidence: `text` is Markdown in the lesson's words
    (a cost claim shows what is true instead, which is what its evidence backs)."""

    question: Question
    kind: str  # "key point" or "claim"
    text: str
    evidence: tuple[Evidence, ...]
    passage: str = ""  # on a case study: the seed's few words that back it


def citations(cites: Callable[[Evidence], bool]) -> list[Citation]:
    """Every key point and claim, in course order, with evidence for which `cites` is true."""
    found = []
    for question in all_questions():
        backed = [("key point", p.text, p.evidence) for p in question.key_points]
        backed += [("claim", c.truth or c.text, c.evidence) for c in question.claims]
        for kind, text, evidence in backed:
            if any(cites(e) for e in evidence):
                found.append(Citation(question, kind, text, tuple(evidence)))
    return found


def detail_of(evidence: Evidence, name: str) -> str:
    return dict(evidence.detail).get(name, "")


def citing_note(number: int) -> list[Citation]:
    return citations(lambda e: e.kind == "measured" and detail_of(e, "item") == str(number))


def citing_seed(seed: str) -> list[Citation]:
    """What cites the seed, each with the passage of it that the citation quotes."""
    found = citations(lambda e: e.kind == "seed" and detail_of(e, "seed") == seed)
    return [
        replace(c, passage=next(e.quote for e in c.evidence if detail_of(e, "seed") == seed) or "")
        for c in found
    ]


def citing_source(module: str, function: str) -> list[Citation]:
    return citations(
        lambda e: (
            e.kind == "source"
            and (detail_of(e, "module"), detail_of(e, "function")) == (module, function)
        )
    )


def shows_cited(module: str, function: str) -> tuple[str, ...]:
    """The `shows:` texts the lessons cite in that function, each once, in first-cited order."""
    found: list[str] = []
    for citation in citing_source(module, function):
        for e in citation.evidence:
            if e.kind == "source" and detail_of(e, "module") == module:
                if detail_of(e, "function") == function:
                    found += [s for s in e.shows if s not in found]
    return tuple(found)

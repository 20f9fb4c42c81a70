"""What a loaded lesson is: plain frozen records that pages, the quiz and the lab read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lessons.evidence import Evidence
from lessons.rendering import count_words
from lessons.schema import TIERS
from lessons.yamlschema import Problem

__all__ = [
    "Claim",
    "CodeSample",
    "Evidence",
    "Followup",
    "KeyPoint",
    "LessonError",
    "Problem",
    "Question",
]


class LessonError(Exception):
    """A lesson file (or several) cannot be used; `.problems` says where and why."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass(frozen=True)
class Claim:
    """A statement a candidate might make. `holds` False: it costs you the question."""

    key: str  # f"{question_slug}:{id}", what quiz answers are stored against
    id: str
    question_slug: str
    text: str
    holds: bool
    why: str  # why it is wrong (cost claims) or why it holds (hold claims)
    truth: str | None  # what is true instead; None for claims that hold
    tier: str
    evidence: tuple[Evidence, ...] = ()  # how we know (lessons/evidence.py)
    versions: tuple[tuple[str, str], ...] = ()  # (product, range) it holds for, when it names one


@dataclass(frozen=True)
class KeyPoint:
    text: str  # markdown
    evidence: tuple[Evidence, ...] = ()
    versions: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class CodeSample:
    title: str
    language: str
    tier: str
    code: str
    caption: str = ""


@dataclass(frozen=True)
class Followup:
    question: str
    answer: str


@dataclass(frozen=True)
class Question:
    slug: str
    order: int
    title: str
    prompt: str
    level: str
    importance: str
    frequency: str
    key_points: list[KeyPoint]
    tiers: dict[str, str]  # basics/solid/senior -> markdown
    code_samples: list[CodeSample]
    go_deeper: dict[str, str]  # junior/middle/senior/principal -> markdown
    followups: list[Followup]
    claims_cost: list[Claim]
    claims_hold: list[Claim]
    experiments: list[str] = field(default_factory=list)
    path: Path | None = None
    checked_against: dict[str, str] = field(default_factory=dict)  # product -> version checked
    course_step: int | None = None  # place on the "start here" path; None: after the path

    def words(self) -> dict[str, int]:
        return {tier: count_words(self.tiers.get(tier, "")) for tier in TIERS}

    def samples_for(self, tier: str) -> list[CodeSample]:
        return [s for s in self.code_samples if s.tier == tier]

    @property
    def claims(self) -> list[Claim]:
        return [*self.claims_cost, *self.claims_hold]


def in_course_order(questions: list[Question]) -> list[Question]:
    """The one order the app shows questions in (home list, Previous/Next, `n`/`p`, quiz and
    progress lists): by `course_step`, then the unstepped ones by `order`."""
    return sorted(
        questions, key=lambda q: (q.course_step is None, q.course_step or 0, q.order, q.slug)
    )

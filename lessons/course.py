"""The "start here" path through the questions, from middle to senior level.

The order is data: each lesson file's `course_step` (lessons/schema.py), checked across files
by the validator (lessons/loader.py `course_problems`). Lessons without a step follow the
path in index order, so a new file is never hidden from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from lessons.catalog import all_questions
from lessons.lesson import Question, in_course_order
from lessons.models import Learner, QuizAnswer
from lessons.progress import revealed_tiers
from lessons.schema import TIERS


def course_order(questions: list[Question] | None = None) -> list[Question]:
    """Questions in course order: by `course_step`, then the unstepped ones by `order`."""
    return in_course_order(all_questions() if questions is None else questions)


def course_neighbours(slug: str) -> tuple[Question | None, Question | None]:
    """(previous, next) on the path: the question page's top links, its `p`/`n` keys and its
    closing "next on the course path" all come from here, so they cannot disagree."""
    path = course_order()
    slugs = [q.slug for q in path]
    if slug not in slugs:
        return None, None
    i = slugs.index(slug)
    return (path[i - 1] if i > 0 else None), (path[i + 1] if i + 1 < len(path) else None)


def course_next_question(slug: str) -> Question | None:
    """The question after `slug` on the path, for the question page's closing links."""
    return course_neighbours(slug)[1]


@dataclass(frozen=True)
class CourseStep:
    """One question on the path, with how far this learner has got with it."""

    number: int
    question: Question
    tiers_seen: int
    quizzed: bool

    @property
    def done(self) -> bool:
        """Every tier read and the question quizzed at least once."""
        return self.tiers_seen == len(TIERS) and self.quizzed


def course_steps(*, learner: Learner) -> list[CourseStep]:
    seen = revealed_tiers(learner=learner)
    quizzed = set(
        QuizAnswer.objects.filter(attempt__learner=learner).values_list("question_slug", flat=True)
    )
    return [
        CourseStep(
            number=n,
            question=q,
            tiers_seen=len(seen.get(q.slug, ())),
            quizzed=q.slug in quizzed,
        )
        for n, q in enumerate(course_order(), 1)
    ]


def course_resume(steps: list[CourseStep]) -> CourseStep | None:
    """Where "start here" leads: the first step not done yet (None when all are)."""
    return next((step for step in steps if not step.done), None)

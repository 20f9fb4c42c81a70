"""Read lesson YAML files into Questions, collecting every problem with its line.

The models in lessons/schema.py say what a file must hold; lessons/yamlschema.py turns what
pydantic refuses into `path:line: message` on the line an author has to fix. The validator
command and the app both call `check_files`, which is why a bad file is refused with the same
messages everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from lessons.evidence import evidence_from_model
from lessons.evidence_check import source_problem
from lessons.evidence_context import evidence_context
from lessons.lesson import (
    Claim,
    CodeSample,
    Followup,
    KeyPoint,
    LessonError,
    Problem,
    Question,
)
from lessons.question_links import link_problems
from lessons.schema import LEVELS, LessonModel
from lessons.shown_paths import display_path
from lessons.yamlschema import Document, document_load, document_validate


def _backing(item) -> dict:
    return {
        "evidence": tuple(evidence_from_model(e) for e in item.evidence),
        "versions": tuple(sorted((item.versions or {}).items())),
    }


def _claim(model: LessonModel, c, *, holds: bool) -> Claim:
    return Claim(
        key=f"{model.slug}:{c.id}",
        id=c.id,
        question_slug=model.slug,
        text=c.claim,
        holds=holds,
        why=c.why if holds else c.why_wrong,
        truth=None if holds else c.truth,
        tier=c.tier,
        **_backing(c),
    )


def question_from_model(model: LessonModel, path: Path) -> Question:
    tiers = model.tiers
    return Question(
        slug=model.slug,
        order=model.order,
        title=model.title,
        prompt=model.prompt,
        level=model.level,
        importance=model.importance,
        frequency=model.frequency,
        key_points=[KeyPoint(k.point, **_backing(k)) for k in model.key_points],
        tiers={"basics": tiers.basics, "solid": tiers.solid, "senior": tiers.senior},
        code_samples=[
            CodeSample(s.title, s.language, s.tier, s.code, s.caption or "")
            for s in model.code_samples
        ],
        go_deeper=model.go_deeper.model_dump(),
        followups=[Followup(f.question, f.answer) for f in model.followups],
        claims_cost=[_claim(model, c, holds=False) for c in model.claims_cost],
        claims_hold=[_claim(model, c, holds=True) for c in model.claims_hold],
        experiments=list(model.experiments or []),
        path=path,
        checked_against=dict(model.checked_against),
        course_step=model.course_step,
    )


def _duplicate_claim_ids(doc: Document, model: LessonModel) -> list[Problem]:
    """A claim id names one claim, across cost and hold claims (quiz answers key on it)."""
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for field in ("claims_cost", "claims_hold"):
        for i, claim in enumerate(getattr(model, field)):
            line = doc.line((field, i, "id"))
            if claim.id in seen:
                message = f"duplicate claim id {claim.id!r} (first on line {seen[claim.id]})"
                problems.append(Problem(doc.shown, line, message))
            else:
                seen[claim.id] = line
    return problems


def _backed_items(model: LessonModel):
    """(location, name) of everything that carries evidence, named as a reader finds it."""
    for i, point in enumerate(model.key_points):
        yield ("key_points", i), f"key point {i + 1}", point
    for field in ("claims_cost", "claims_hold"):
        for i, claim in enumerate(getattr(model, field)):
            yield (field, i), f"claim {claim.id}", claim


def _source_problems(doc: Document, model: LessonModel) -> list[Problem]:
    """Every `source` reference whose function or `shows:` text is gone from the installed
    package, named by the claim it backs (so an upgrade fails CI instead of going unnoticed)."""
    problems: list[Problem] = []
    for loc, name, item in _backed_items(model):
        for j, evidence in enumerate(item.evidence):
            ref = evidence.source
            if ref is None:
                continue
            why = source_problem(module=ref.module, function=ref.function, shows=tuple(ref.shows))
            if why:
                where = (*loc, "evidence", j, "source", "shows")
                problems.append(doc.problem(where, f"{model.slug} {name}: {why}"))
    return problems


def check_file(path: Path) -> tuple[Question | None, list[Problem]]:
    """One file on its own: the Question if it is sound, and every problem found."""
    question, problems, _ = _check(Path(path), evidence_context())
    return question, problems


def _check(path: Path, context: dict) -> tuple[Question | None, list[Problem], Document | None]:
    doc, problems = document_load(path, shown=display_path(path))
    if doc is None:
        return None, problems, None
    model, problems = document_validate(doc, LessonModel, context=context)
    if model is None:
        return None, problems, doc
    problems = _duplicate_claim_ids(doc, model)
    if context.get("sources"):
        problems += _source_problems(doc, model)
    if problems:
        return None, problems, doc
    return question_from_model(model, path), [], doc


@dataclass
class Checked:
    """Result of checking a set of files: the sound questions and every problem."""

    questions: list[Question]
    problems: list[Problem]
    broken: dict[str, list[Problem]]  # shown path -> its problems


def check_files(paths: list[Path], *, sources: bool = False) -> Checked:
    """Every file checked alone, then across files (a slug or order used twice: the later
    file by name is refused, so the first keeps working; a link to a question no file
    declares, or a question named by number, refuses the file that has it). `sources`: also read every `source`
    reference's function in the installed packages (the validator and CI do; pages do not, so
    a deployed site keeps its lessons whatever is installed beside it)."""
    questions: list[Question] = []
    problems: list[Problem] = []
    by_slug: dict[str, Question] = {}
    by_order: dict[int, Question] = {}
    context = {**evidence_context(), "sources": sources}
    docs: dict[str, Document] = {}
    declared: set[str] = set()  # every slug a file names, sound or not: links may point at it
    for path in sorted(Path(p) for p in paths):
        question, found, doc = _check(path, context)
        if doc is not None and isinstance(doc.data, dict) and isinstance(doc.data.get("slug"), str):
            declared.add(doc.data["slug"])
        if question is not None:
            first = by_slug.get(question.slug)
            if first is not None:
                found.append(
                    doc.problem(
                        ("slug",),
                        f"slug: duplicate slug {question.slug!r} (also in {display_path(first.path)})",
                    )
                )
            other = by_order.get(question.order)
            if other is not None:
                found.append(
                    doc.problem(
                        ("order",),
                        f"order: duplicate order {question.order} (also in {display_path(other.path)})",
                    )
                )
            if not found:
                by_slug[question.slug] = question
                by_order[question.order] = question
                questions.append(question)
                docs[question.slug] = doc
        problems.extend(found)
    refused, found = course_problems(questions, docs)
    problems.extend(found)
    for q in questions:
        found = link_problems(
            docs[q.slug], declared, context.get("experiments"), context.get("facts")
        )
        if found:
            refused.add(q.slug)
            problems.extend(found)
    questions = [q for q in questions if q.slug not in refused]
    broken: dict[str, list[Problem]] = {}
    for p in problems:
        broken.setdefault(p.path, []).append(p)
    questions.sort(key=lambda q: (q.order, q.slug))
    return Checked(questions=questions, problems=problems, broken=broken)


def course_problems(
    questions: list[Question], docs: dict[str, Document]
) -> tuple[set[str], list[Problem]]:
    """The "start here" path across files: a step used twice, or a step that goes down in
    level (a middle question after a senior one), refuses the later file, as a duplicate
    `order` does. Returns (refused slugs, problems)."""
    rank = {level: i for i, level in enumerate(LEVELS)}
    stepped = sorted(
        (q for q in questions if q.course_step is not None),
        key=lambda q: (q.course_step, str(q.path)),
    )
    refused: set[str] = set()
    problems: list[Problem] = []
    by_step: dict[int, Question] = {}
    highest: Question | None = None
    for q in stepped:
        first = by_step.get(q.course_step)
        if first is not None:
            message = (
                f"course_step: duplicate course step {q.course_step} "
                f"(also in {display_path(first.path)})"
            )
        elif highest is not None and rank[q.level] < rank[highest.level]:
            message = (
                f"course_step: step {q.course_step} is a {q.level} question after step "
                f"{highest.course_step}, a {highest.level} one ({display_path(highest.path)}); "
                "the course goes up in level, never down"
            )
        else:
            by_step[q.course_step] = q
            if highest is None or rank[q.level] >= rank[highest.level]:
                highest = q
            continue
        refused.add(q.slug)
        problems.append(docs[q.slug].problem(("course_step",), message))
    return refused, problems


def lesson_dir() -> Path:
    return Path(getattr(settings, "LESSONS_DIR", Path(settings.BASE_DIR) / "lessons" / "content"))


def lesson_files(directory: Path | None = None) -> list[Path]:
    directory = Path(directory or lesson_dir())
    return sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")])


def load_file(path: Path) -> Question:
    """One sound Question, or LessonError with every problem in the file."""
    question, problems = check_file(Path(path))
    if problems or question is None:
        raise LessonError(problems)
    return question

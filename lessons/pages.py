"""What the lesson pages show, prepared in Python so templates only lay it out."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse
from django.utils.safestring import SafeString

from lessons.evidence_display import checked_against_shown
from lessons.lab_titles import lab_experiment_titles
from lessons.last_runs import cited_last_runs
from lessons.lesson import Claim, CodeSample, Question
from lessons.rendering import highlight_code, render_inline_markdown, render_markdown
from lessons.schema import LEVELS, TIER_SECONDS, TIERS

TIER_LABELS = {"basics": "Basics", "solid": "Solid", "senior": "Senior"}
TIER_HINTS = {
    "basics": "about 20 seconds spoken",
    "solid": "about 40 seconds spoken",
    "senior": "the deep dive",
}


@dataclass(frozen=True)
class SampleView:
    sample: CodeSample
    html: str
    caption_html: str


@dataclass(frozen=True)
class TierView:
    name: str
    label: str
    hint: str
    seconds: int
    url: str
    html: str
    samples: list[SampleView]
    claims: list[Claim]  # what a candidate might say at this tier, each under #claim-<id>


def marked_blocks(question: Question) -> dict[str, SafeString]:
    """The page's prose as sanitised HTML, in the order the page shows it (prompt, tiers, key
    points, follow-up answers, go deeper), each glossary term marked at its first use. Hidden
    tiers count: the marks do not move as tiers open, so a term is marked once per page."""
    from lessons.glossary import load_glossary
    from lessons.term_marks import Marker

    blocks: dict[str, SafeString] = {"prompt": render_markdown(question.prompt)}
    blocks.update({t: render_markdown(question.tiers[t]) for t in TIERS})
    for i, point in enumerate(question.key_points):
        blocks[f"key-point-{i}"] = render_inline_markdown(point.text)
    for i, followup in enumerate(question.followups):
        blocks[f"followup-{i}"] = render_markdown(followup.answer)
    blocks.update({f"go-deeper-{lv}": render_markdown(question.go_deeper[lv]) for lv in LEVELS})
    marker = Marker(load_glossary().terms)
    return {key: marker(html) for key, html in blocks.items()}  # in order: first use wins


def tier_view(
    question: Question, name: str, marked: dict[str, SafeString] | None = None
) -> TierView:
    return TierView(
        name=name,
        label=TIER_LABELS[name],
        hint=TIER_HINTS[name],
        seconds=TIER_SECONDS[name],
        url=reverse("lessons:tier", args=[question.slug, name]),
        html=marked[name] if marked else render_markdown(question.tiers[name]),
        samples=[
            SampleView(
                sample=s,
                html=highlight_code(s.code, s.language),
                caption_html=render_markdown(s.caption) if s.caption else "",
            )
            for s in question.samples_for(name)
        ],
        claims=[c for c in question.claims if c.tier == name],
    )


def tiers_upto(tier: str | None) -> list[str]:
    if tier is None:
        return []
    return list(TIERS[: TIERS.index(tier) + 1])


def lesson_experiments(question: Question) -> list[str]:
    """Experiment slugs of a lesson: its `experiments` list, then any other experiment its
    key points and claims cite as evidence, each once, in that order."""
    slugs = list(question.experiments)
    for backed in [*question.key_points, *question.claims]:
        for evidence in backed.evidence:
            if evidence.kind == "experiment" and evidence.experiment not in slugs:
                slugs.append(evidence.experiment)
    return [slug for slug in slugs if slug]


def experiment_links(question: Question, slugs: list[str] | None = None) -> list[dict]:
    """The lab experiments this lesson names, with the lab's titles. A slug the lab does not
    know is listed without a link rather than pointing at a 404."""
    known = lab_experiment_titles()
    links = []
    for slug in question.experiments if slugs is None else slugs:
        title = (known or {}).get(slug)
        links.append(
            {
                "slug": slug,
                "title": title or slug.replace("-", " ").capitalize(),
                "url": f"/lab/experiments/{slug}/" if known is None or title else "",
            }
        )
    return links


def question_context(question: Question, *, revealed_upto: str | None) -> dict:
    """Everything the question page (and its partials) needs."""
    from lessons.course import course_neighbours

    revealed = tiers_upto(revealed_upto)
    previous, following = course_neighbours(question.slug)
    marked = marked_blocks(question)
    return {
        "question": question,
        "prompt_html": marked["prompt"],
        "revealed": [tier_view(question, t, marked) for t in revealed],
        "upcoming": upcoming_tier(question, revealed_upto),
        "key_points": [
            {"point": point, "html": marked[f"key-point-{i}"]}
            for i, point in enumerate(question.key_points)
        ],
        "lab_last_runs": cited_last_runs([*question.key_points, *question.claims]),
        "checked_against": checked_against_shown(question.checked_against),
        "go_deeper": [{"level": level, "html": marked[f"go-deeper-{level}"]} for level in LEVELS],
        "followups": [
            {"question_html": render_markdown(f.question), "answer_html": marked[f"followup-{i}"]}
            for i, f in enumerate(question.followups)
        ],
        "experiments": experiment_links(question),
        "next_steps": next_steps(question),
        "previous": previous,
        "next": following,
    }


def next_steps(question: Question) -> dict:
    """The page's closing links: quiz this question, the lab, its first experiment the lab
    has, and the next question on the course path."""
    from lessons.course import course_next_question

    runnable = [e for e in experiment_links(question, lesson_experiments(question)) if e["url"]]
    return {
        "experiment": runnable[0] if runnable else None,
        "course_next": course_next_question(question.slug),
    }


def upcoming_tier(question: Question, revealed_upto: str | None) -> TierView | None:
    index = -1 if revealed_upto is None else TIERS.index(revealed_upto)
    if index + 1 >= len(TIERS):
        return None
    return tier_view(question, TIERS[index + 1])

"""Template filters for lesson text: `{% load lesson_tags %}`, then `{{ text|markdown }}` or
`{{ code|highlight:"python" }}`; `{% how_we_know claim %}` shows where a claim comes from.
Other apps (quiz, lab) use them to show claims and samples."""

from django import template

from lessons import pages
from lessons.catalog import get_question
from lessons.evidence_display import how_we_know as how_we_know_context
from lessons.last_runs import LastRuns, cited_last_runs, experiments_cited
from lessons.rendering import highlight_code, render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str):
    return render_markdown(str(text or ""))


@register.filter(name="highlight")
def highlight_filter(code: str, language: str = "text"):
    return highlight_code(str(code or ""), language)


@register.filter
def spoken(value: str) -> str:
    """A schema value as words: "very-often" reads "very often"."""
    return str(value or "").replace("-", " ")


@register.inclusion_tag("lessons/_how_we_know.html", takes_context=True)
def how_we_know(context, backed, checked: bool = False) -> dict:
    """`{% how_we_know point %}` or `{% how_we_know claim checked=True %}`: the versions a
    claim or key point was measured or documented on, the versions it holds for and a "How we
    know" disclosure listing its evidence, each cited check with what its experiment last
    observed here. With `checked`, a claim's disclosure also names the versions its lesson was
    checked against (the question page shows those once, in its header). A page that shows
    many sets `lab_last_runs` (lessons.last_runs.cited_last_runs) so they are read at once."""
    evidence = tuple(getattr(backed, "evidence", ()) or ())
    runs = context.get("lab_last_runs")
    if not isinstance(runs, LastRuns) or not experiments_cited([backed]) <= runs.asked:
        runs = cited_last_runs([backed])
    checked_against = None
    if checked:
        question = get_question(getattr(backed, "question_slug", ""))
        checked_against = question.checked_against if question else None
    titles = pages.lab_experiment_titles() if any(e.kind == "experiment" for e in evidence) else {}
    return how_we_know_context(
        evidence=evidence,
        versions=getattr(backed, "versions", ()) or (),
        checked_against=checked_against,
        experiment_titles=titles,
        last_runs=runs,
    )


@register.inclusion_tag("lessons/_terms_defined.html")
def terms_defined(*texts) -> dict:
    """`{% terms_defined label unit %}`: the glossary's one-line definition of every term the
    texts use, for a form to put before the question that uses them ("how many receipts?")."""
    from lessons.glossary import load_glossary
    from lessons.term_marks import terms_in

    return {"terms": terms_in(" ".join(str(t or "") for t in texts), load_glossary().terms)}

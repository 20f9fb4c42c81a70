"""The pages "How we know" links to: a measurement note, a seed's case study, a library
function's installed source. Each lists the claims and key points that cite it."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from lessons.evidence import Evidence
from lessons.evidence_citations import citing_note, citing_seed, citing_source, shows_cited
from lessons.evidence_display import checked_against_shown
from lessons.lab_versions import lab_versions
from lessons.measurement_notes import measurement_note
from lessons.pages import lab_experiment_titles
from lessons.rendering import highlight_lines
from lessons.seed_cases import seed_cases
from lessons.source_view import ALLOWED_PACKAGES, source_view
from lessons.views import _not_found


def _experiments_beside(citations) -> list[dict]:
    """The lab experiments cited next to this evidence: where a learner measures it again."""
    titles = lab_experiment_titles() or {}
    slugs = []
    for citation in citations:
        for e in citation.evidence:
            if e.kind == "experiment" and e.experiment and e.experiment not in slugs:
                slugs.append(e.experiment)
    return [
        {"title": titles.get(s, s), "href": Evidence("experiment", s, experiment=s).href}
        for s in slugs
    ]


@require_GET
def note(request: HttpRequest, number: int) -> HttpResponse:
    """One measurement note: what was measured, the figures, where and on which versions."""
    found = measurement_note(number)
    if found is None:
        return _not_found(request, f"There is no measurement note {number}.")
    cited = citing_note(found.number)
    return render(
        request,
        "lessons/evidence_note.html",
        {
            "note": found,
            "citations": cited,
            "experiments": _experiments_beside(cited),
            "lab_runs": checked_against_shown(lab_versions()),
        },
    )


@require_GET
def case(request: HttpRequest, slug: str) -> HttpResponse:
    """A seed document as a case study: its title, a summary in our words, what it backs."""
    cases = seed_cases()
    found = cases.by_slug(slug) if cases is not None else None
    if found is None:
        return _not_found(request, f"There is no case study “{slug}”.")
    return render(
        request,
        "lessons/evidence_case.html",
        {"case": found, "citations": citing_seed(found.seed)},
    )


@require_GET
def source(request: HttpRequest, module: str, function: str) -> HttpResponse:
    """A function as the installed package has it, the lines the lessons cite marked."""
    shows = shows_cited(module, function)
    view = source_view(module, function, shows)
    if view is None:
        allowed = ", ".join(ALLOWED_PACKAGES)
        return _not_found(
            request,
            f"There is no function “{function}” in an installed module “{module}” "
            f"this site shows (only {allowed}).",
        )
    return render(
        request,
        "lessons/evidence_source.html",
        {
            "view": view,
            "shows": shows,
            "code_html": highlight_lines(
                view.code, "python", first_line=view.first_line, marked=view.marked
            ),
            "marked_shown": [view.first_line + n - 1 for n in view.marked],
            "citations": citing_source(module, function),
        },
    )

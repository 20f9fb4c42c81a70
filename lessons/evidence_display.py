"""How pages show where a claim comes from: the rows of a "How we know" disclosure, the
versions a claim holds for and the versions a lesson was checked against, prepared here so
the one template partial (lessons/_how_we_know.html) only lays them out.

Everything shown is plain text (the template escapes it); the only links are the site's own
pages (a lab experiment, a measurement note, a case study, a source view) and documentation
URLs that are http or https.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from django.urls import NoReverseMatch, reverse

from lessons.claim_versions import known_experiments, version_line, version_range_spoken
from lessons.evidence import PRODUCTS, Evidence
from lessons.measurement_notes import measurement_notes
from lessons.seed_cases import seed_cases
from lessons.source_view import ALLOWED_PACKAGES
from teachlab.lab.matrix.records import verified_summary


@dataclass(frozen=True)
class CheckRow:
    """A check an experiment reference cites: the sentence it proves, and what the last run
    of that experiment on this server saw (`seen`, a phrase), with `passed` None when it has
    not run here."""

    id: str
    says: str
    seen: str
    passed: bool | None = None


@dataclass(frozen=True)
class EvidenceRow:
    """One line of a "How we know" list. `title` is the main text (the experiment's title, what
    was measured, the documentation page; for source, the package and its versions), `code`
    the names set as code (the seed file; the module and the function), `note` a trailing
    remark, `href` a safe link or None."""

    kind: str
    kind_label: str
    title: str = ""
    code: tuple[str, ...] = ()
    note: str = ""
    href: str | None = None
    external: bool = False
    checks: tuple[CheckRow, ...] = ()  # experiment: the cited checks
    note_href: str | None = None  # measured: the note's own page, linked from `note`
    passage: str = ""  # seed: the case's own few words that back the claim
    # experiment: where `lab matrix` verified it, one row per outcome (records whose digest
    # matches the experiment file; teachlab.lab.matrix.records.verified_summary)
    verified: tuple[dict, ...] = ()


NOT_RUN = "not run yet on this server"


def check_rows(evidence: Evidence, *, says: dict[str, str], last_run) -> tuple[CheckRow, ...]:
    """The cited checks of an experiment reference, each with the value its last run observed
    (`last_run`, a lessons.last_runs.LastRun, None when it has not run on this server)."""
    rows = []
    for ident in evidence.checks:
        sentence = says.get(ident) or ident
        if last_run is None:
            rows.append(CheckRow(ident, sentence, NOT_RUN))
            continue
        when = f"{last_run.finished_at:%Y-%m-%d}" if last_run.finished_at else "undated"
        seen = last_run.checks.get(ident)
        if seen is None:
            rows.append(CheckRow(ident, sentence, f"the last run ({when}) has no result for it"))
            continue
        verdict = "" if seen.passed else "; the check failed"
        rows.append(
            CheckRow(
                ident, sentence, f"last run ({when}) observed {seen.observed}{verdict}", seen.passed
            )
        )
    return tuple(rows)


def href_safe(url: str | None) -> str | None:
    """`url` if it is an absolute http or https address, else None (shown as text, not a link)."""
    if not url:
        return None
    try:
        parts = urlsplit(str(url).strip())
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return parts.geturl()


def product_name(key: str) -> str:
    return PRODUCTS.get(key, key)


def versions_shown(versions) -> list[str]:
    """(product, range) pairs as "RabbitMQ 4.0 or later", in the order given."""
    items = versions.items() if isinstance(versions, dict) else versions
    return [f"{product_name(k)} {version_range_spoken(v)}" for k, v in items]


def checked_against_shown(checked_against: dict[str, str]) -> str:
    """{"celery": "5.7.0", "kombu": "5.7.0"} as "Celery 5.7.0, kombu 5.7.0"."""
    return ", ".join(f"{product_name(k)} {v}" for k, v in (checked_against or {}).items())


def fact_headline(item: int, path: Path | None = None) -> str | None:
    """What item `item` of the measurement notes (lessons/measurements.md) measured: its bold headline,
    or its first sentence cut short. None when the notes are not there (a deployed image)."""
    note = measurement_notes(path).get(int(item))
    return note.headline if note else None


def source_href(module: str, function: str) -> str | None:
    """The source view of a cited function, when its package is one the site shows."""
    if module.split(".")[0] not in ALLOWED_PACKAGES:
        return None
    try:
        return reverse("lessons:evidence_source", args=[module, function])
    except NoReverseMatch:
        return None


def _experiment_row(evidence: Evidence, detail: dict, titles, last_runs) -> EvidenceRow:
    slug = evidence.experiment or detail.get("experiment", "")
    title = (titles or {}).get(slug)
    linked = titles is None or title is not None
    checks = ()
    if last_runs is not None:
        known = known_experiments().get(slug)
        says = known.says if known else {}
        checks = check_rows(evidence, says=says, last_run=last_runs.get(slug))
    return EvidenceRow(
        "experiment",
        "Lab experiment",
        title=title or slug.replace("-", " ").capitalize(),
        href=evidence.href if linked else None,
        note="" if linked else "not in the lab yet",
        checks=checks,
        verified=tuple(verified_summary(slug)) if linked else (),
    )


def _measured_row(evidence: Evidence, detail: dict, titles, last_runs) -> EvidenceRow:
    item = detail.get("item", "")
    headline = fact_headline(int(item)) if item.isdigit() else None
    href = reverse("lessons:evidence_note", args=[int(item)]) if headline else None
    return EvidenceRow(
        "measured",
        "Measured on this stack",
        title=headline or f"measurement note {item}",
        note=f"measurement note {item}" if headline else "",
        note_href=href,
    )


def _seed_row(evidence: Evidence, detail: dict, titles, last_runs) -> EvidenceRow:
    seed = detail.get("seed", evidence.label)
    cases = seed_cases()
    case = cases.by_seed.get(seed) if cases is not None else None
    if case is None:  # a lesson folder without a case for it: the file name, unlinked
        return EvidenceRow("seed", "Seed document", code=(seed,), passage=evidence.quote or "")
    return EvidenceRow(
        "seed",
        "Case study",
        title=case.title,
        href=reverse("lessons:evidence_case", args=[case.slug]),
        passage=evidence.quote or "",
    )


def _source_row(evidence: Evidence, detail: dict, titles, last_runs) -> EvidenceRow:
    module, function = detail.get("module", ""), detail.get("function", "")
    return EvidenceRow(
        "source",
        "Library source",
        title=f"{detail.get('package', '')} {version_range_spoken(detail.get('versions', ''))}",
        code=(module, function),
        href=source_href(module, function),
    )


def _docs_row(evidence: Evidence, detail: dict, titles, last_runs) -> EvidenceRow:
    href = href_safe(evidence.url)
    return EvidenceRow(
        "docs",
        "Documentation",
        title=detail.get("title", evidence.label),
        note=", ".join(
            x for x in (detail.get("version", ""), urlsplit(href).hostname if href else "") if x
        ),
        href=href,
        external=href is not None,
    )


# evidence kind -> its row, from (evidence, its detail as a dict, experiment titles, last runs)
ROWS = {
    "experiment": _experiment_row,
    "measured": _measured_row,
    "seed": _seed_row,
    "source": _source_row,
    "docs": _docs_row,
}


def evidence_row(
    evidence: Evidence,
    *,
    experiment_titles: dict[str, str] | None,
    last_runs: dict | None = None,
) -> EvidenceRow:
    """One piece of evidence as a row. `experiment_titles` is the lab's catalog (slug -> title);
    None when it cannot be read, then every experiment still links and the lab explains itself.
    `last_runs` (slug -> lessons.last_runs.LastRun) gives an experiment's cited checks what
    they last observed; None leaves the checks out."""
    row = ROWS.get(evidence.kind)
    if row is None:
        return EvidenceRow(evidence.kind, evidence.kind.capitalize(), title=evidence.label)
    return row(evidence, dict(evidence.detail), experiment_titles, last_runs)


def how_we_know(
    *,
    evidence,
    versions=(),
    checked_against: dict[str, str] | None = None,
    experiment_titles: dict[str, str] | None = None,
    last_runs: dict | None = None,
) -> dict:
    """What the "How we know" partial needs for one claim or key point: with `last_runs`
    (slug -> LastRun), also the line saying which versions it was measured or documented on,
    and what each cited check last observed."""
    return {
        "rows": [
            evidence_row(e, experiment_titles=experiment_titles, last_runs=last_runs)
            for e in evidence
        ],
        "version_line": version_line(evidence, last_runs) if last_runs is not None else "",
        "holds_for": versions_shown(versions),
        "checked_against": checked_against_shown(checked_against or {}),
    }

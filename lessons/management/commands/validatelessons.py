"""`validatelessons [FILE ...] [--json]`: every problem in the lesson files as
`path:line: message`, exit 1 if there is any; --json summarises each question."""

import json
from pathlib import Path

import yaml
from django.core.management.base import BaseCommand

from lessons.claim_versions import documented_for, measured_on
from lessons.glossary import check_glossary, glossary_path
from lessons.loader import check_files, lesson_files
from lessons.rendering import count_words
from lessons.schema import TIERS
from lessons.seed_cases import seed_cases
from lessons.shown_paths import display_path


def _count(value) -> int:
    return len(value) if isinstance(value, list) else 0


def summary(path: Path, problems: list[str]) -> dict | None:
    """Counts read straight from the file, so a broken file still shows its word counts."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        data = None
    if not isinstance(data, dict):
        data = {}
    tiers = data.get("tiers") if isinstance(data.get("tiers"), dict) else {}
    return {
        "path": display_path(path),
        "slug": data.get("slug"),
        "title": data.get("title"),
        "order": data.get("order"),
        "course_step": data.get("course_step"),
        "level": data.get("level"),
        "importance": data.get("importance"),
        "frequency": data.get("frequency"),
        "words": {t: count_words(str(tiers.get(t) or "")) for t in TIERS},
        "key_points": _count(data.get("key_points")),
        "claims_cost": _count(data.get("claims_cost")),
        "claims_hold": _count(data.get("claims_hold")),
        "followups": _count(data.get("followups")),
        "code_samples": _count(data.get("code_samples")),
        "experiments": [e for e in data.get("experiments") or [] if isinstance(e, str)],
        "ok": not problems,
        "problems": problems,
    }


def evidence_rows(questions) -> list[dict]:
    """One row per key point and claim: what it says and how we know it."""
    rows = []
    for q in questions:
        for i, point in enumerate(q.key_points):
            rows.append(_row(q, "key_point", str(i), point.text, point))
        for claim in q.claims:
            kind = "claim_hold" if claim.holds else "claim_cost"
            rows.append(_row(q, kind, claim.id, claim.text, claim))
    return rows


def _row(question, kind: str, ident: str, text: str, item) -> dict:
    return {
        "lesson": question.slug,
        "kind": kind,
        "id": ident,
        "key": f"{question.slug}:{ident}",
        "text": text,
        "versions": dict(item.versions),
        "checked_against": question.checked_against,
        "evidence": [e.as_dict() for e in item.evidence],
        "measured_on": measured_on(item.evidence),
        "documented_for": documented_for(item.evidence),
    }


class Command(BaseCommand):
    # Content checks must run even while some other app's code is mid-change.
    requires_system_checks: list = []
    help = "Check lesson files (all of them and the glossary, or the ones named) and print each problem."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", help="lesson files (default: all of them)")
        parser.add_argument(
            "--json", action="store_true", help="print a JSON list, one object per question"
        )
        parser.add_argument(
            "--evidence",
            action="store_true",
            help="list every claim and key point with its evidence (with --json: as JSON)",
        )

    def handle(self, *args, **options):
        paths = [Path(f) for f in options["files"]] or lesson_files()
        # Sources too: every `shows:` is read in the installed packages (lessons/evidence_check.py).
        checked = check_files(paths, sources=True)
        if not options["files"] and glossary_path().exists():  # the whole content: its glossary too
            slugs = {q.slug for q in checked.questions}
            checked.problems.extend(check_glossary(glossary_path(), slugs).problems)
        if not options["files"]:  # `lab matrix` records must match their experiment files
            from teachlab.lab.matrix.records import verified_problems

            checked.problems.extend(verified_problems())
        cases = seed_cases()
        if not options["files"] and cases is not None:
            checked.problems.extend(cases.problems)
        for problem in checked.problems:
            (self.stderr if options["json"] else self.stdout).write(str(problem))
        if options["evidence"]:
            self._evidence(checked.questions, as_json=options["json"])
        elif options["json"]:
            rows = [
                summary(p, [str(x) for x in checked.broken.get(display_path(p), [])])
                for p in sorted(paths)
            ]
            rows.sort(key=lambda r: r["order"] if isinstance(r["order"], int) else 1e9)
            self.stdout.write(json.dumps(rows, indent=2))
        elif not checked.problems and not options["evidence"]:
            self.stdout.write(f"{len(checked.questions)} lesson file(s), no problems")
        if checked.problems:
            if not options["json"] and not options["evidence"]:
                self.stdout.write(f"{len(checked.problems)} problem(s)")
            raise SystemExit(1)

    def _evidence(self, questions, *, as_json: bool) -> None:
        rows = evidence_rows(questions)
        if as_json:
            self.stdout.write(json.dumps(rows, indent=2))
            return
        for row in rows:
            versions = ", ".join(f"{k} {v}" for k, v in row["versions"].items())
            self.stdout.write(
                f"{row['key']} [{row['kind']}]{' (' + versions + ')' if versions else ''}"
            )
            self.stdout.write(f"    {row['text']}")
            for e in row["evidence"]:
                self.stdout.write(f"    - {e['label']}{' <' + e['url'] + '>' if e['url'] else ''}")
                for line in e.get("shows") or ():
                    self.stdout.write(f"        shows: {line}")
                if e.get("checks"):
                    self.stdout.write(f"        checks: {', '.join(e['checks'])}")
                if e.get("quote"):
                    self.stdout.write(f"        quote ({e['read']}): {e['quote']}")
            if row["measured_on"]:
                shown = ", ".join(f"{k} {v}" for k, v in row["measured_on"].items())
                self.stdout.write(f"    measured on: {shown}")
            if row["documented_for"]:
                self.stdout.write(f"    documented for: {'; '.join(row['documented_for'])}")
        self.stdout.write(f"{len(rows)} claim(s) and key point(s), every one backed")

"""`manage.py validateexperiments`: check every experiment file, print file:line: problem."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from teachlab.lab.experiments.batch import batch_seconds
from teachlab.lab.experiments.catalog import EXPERIMENTS_DIR, catalog_validate, lesson_claims


class Command(BaseCommand):
    help = "Validate lessons/experiments/*.yaml against the schema, the lessons and the lanes."
    requires_system_checks: list = []  # a broken page elsewhere must not hide content problems

    def add_arguments(self, parser):
        parser.add_argument("--dir", default=str(EXPERIMENTS_DIR), help="folder of experiments")
        parser.add_argument(
            "--coverage", action="store_true", help="list each lesson's claims and what backs them"
        )

    def handle(self, *args, **options):
        experiments, problems = catalog_validate(directory=Path(options["dir"]))
        for problem in problems:
            self.stderr.write(str(problem))
        if problems:
            raise CommandError(f"{len(problems)} problem(s) in the experiment files")
        if options["coverage"]:
            self._coverage(experiments)
        seconds = sum(e.seconds for e in experiments)
        overlapped = batch_seconds(experiments=experiments)
        self.stdout.write(
            f"{len(experiments)} experiments OK (at most {seconds:.0f} s one after another, "
            f"{overlapped:.0f} s with `lab experiment --all`)"
        )

    def _coverage(self, experiments) -> None:
        """A claim with no experiment behind it is one the lab has not shown."""
        backed: dict[tuple[str, str], list[str]] = {}
        for experiment in experiments:
            for back in experiment.backs:
                for claim in back["claims"]:
                    backed.setdefault((back["lesson"], claim), []).append(experiment.slug)
        for lesson, claims in sorted(lesson_claims().items()):
            shown = sum(1 for claim in claims if (lesson, claim) in backed)
            self.stdout.write(f"{lesson}: {shown} of {len(claims)} claims backed")
            for claim in sorted(claims):
                by = backed.get((lesson, claim))
                self.stdout.write(
                    f"  {'+' if by else '-'} {claim}{': ' + ', '.join(by) if by else ''}"
                )

"""`manage.py validateexperiments`: check every experiment file, print file:line: problem."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from teachlab.lab.experiments.catalog import EXPERIMENTS_DIR, catalog_validate


class Command(BaseCommand):
    help = "Validate lessons/experiments/*.yaml against the schema, the lessons and the lanes."
    requires_system_checks: list = []  # a broken page elsewhere must not hide content problems

    def add_arguments(self, parser):
        parser.add_argument("--dir", default=str(EXPERIMENTS_DIR), help="folder of experiments")

    def handle(self, *args, **options):
        experiments, problems = catalog_validate(directory=Path(options["dir"]))
        for problem in problems:
            self.stderr.write(str(problem))
        if problems:
            raise CommandError(f"{len(problems)} problem(s) in the experiment files")
        seconds = sum(e.seconds for e in experiments)
        self.stdout.write(
            f"{len(experiments)} experiments OK (about {seconds:.0f} s if run one after another)"
        )

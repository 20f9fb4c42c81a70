"""Check every lesson file before the app serves it; scripts/setup runs this."""

from django.core.management.base import BaseCommand, CommandError

from lessons.catalog import LessonError, require_sound


class Command(BaseCommand):
    # Content checks must run even while some other app's code is mid-change.
    requires_system_checks: list = []
    help = (
        "Validate all lesson files and fail (exit 1) on any problem, then fill the search "
        "index from them. Pages load lessons from the files on demand; search reads the "
        "database, and refills it itself after an edit, so this only saves the first search "
        "the wait."
    )

    def handle(self, *args, **options):
        try:
            catalog = require_sound()
        except LessonError as exc:
            for problem in exc.problems:
                self.stderr.write(str(problem))
            raise CommandError(f"{len(exc.problems)} problem(s) in lesson files") from exc
        self.stdout.write(f"{len(catalog.questions)} lesson(s) sound")
        from lessons.search_index import index_sync

        _, entries = index_sync()
        self.stdout.write(f"{entries} search entries indexed")

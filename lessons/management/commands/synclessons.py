"""Check every lesson file before the app serves it; scripts/setup runs this."""

from django.core.management.base import BaseCommand, CommandError

from lessons.catalog import LessonError, require_sound


class Command(BaseCommand):
    # Content checks must run even while some other app's code is mid-change.
    requires_system_checks: list = []
    help = (
        "Validate all lesson files and fail (exit 1) on any problem. Lessons are loaded "
        "from the files on demand, so there is nothing else to sync."
    )

    def handle(self, *args, **options):
        try:
            catalog = require_sound()
        except LessonError as exc:
            for problem in exc.problems:
                self.stderr.write(str(problem))
            raise CommandError(f"{len(exc.problems)} problem(s) in lesson files") from exc
        self.stdout.write(f"{len(catalog.questions)} lesson(s) sound")

"""Delete anonymous learners nobody can reach any more (their session is long gone), with
everything that hangs off them; accounts' learners are never touched."""

from django.core.management.base import BaseCommand

from lessons.pruning import learners_prune


class Command(BaseCommand):
    help = "Delete anonymous learners older than TEACHLAB_ANON_LEARNER_DAYS (and their rows)."

    def handle(self, *args, **options):
        removed = learners_prune()
        self.stdout.write(f"{removed} anonymous learner(s) removed.")

"""The project's own Celery app: background jobs of the site itself (experiment attempts), on
the app Redis (settings.REDIS_DB_JOBS) and the queue `teachlab-jobs`, served by one jobs
worker: `celery -A teachlab worker -Q teachlab-jobs` (scripts/run and docker compose start it).

Not to be confused with the lab's lanes (teachlab/lab/worker/celery_app.py, lanes.py): those apps are
the subjects of the experiments, crashed and stopped on purpose. Tasks here register with
`@app.task`, never `shared_task`, so no lane app ever carries them.
"""

import os
import sys

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "teachlab.settings")

JOBS_QUEUE = "teachlab-jobs"

app = Celery("teachlab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _beat_file():
    from django.conf import settings

    return settings.CELERY_BEAT_SCHEDULE_FILENAME


def jobs_worker_argv(name: str = "jobs") -> list[str]:
    """The jobs worker's command line, one place for scripts/run and the tests (pool and
    concurrency come from the CELERY_WORKER_* settings)."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "teachlab",
        "worker",
        "-Q",
        JOBS_QUEUE,
        "-n",
        f"{name}@%h",
        # Beat inside the one jobs worker: the hourly prune of anonymous learners
        # (settings.CELERY_BEAT_SCHEDULE).
        "--beat",
        "--schedule",
        f"{_beat_file()}-{name}",  # one file per worker name: two beats never share one
        "--loglevel",
        os.environ.get("TEACHLAB_WORKER_LOGLEVEL", "INFO"),
    ]

"""The project's own Celery app (CELERY_* settings). The lab's lanes build theirs in lab/lanes.py."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "teachlab.settings")

app = Celery("teachlab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

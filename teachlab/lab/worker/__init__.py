"""Runs in the lab's Celery worker processes: the lane apps, the task, the signal handlers
that append events, the worker registry and controls, the control lane."""

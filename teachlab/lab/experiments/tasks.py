"""Jobs of the experiments on the project's own Celery app (teachlab/celery.py), never a lane's.

`acks_late` stays off on purpose: a lost attempt is failed by the sweep in attempts.py rather
than run a second time (the module docstring there says why).
"""

from __future__ import annotations

from teachlab.celery import app
from teachlab.lab.experiments.attempts import ATTEMPT_TASK, attempt_work


@app.task(name=ATTEMPT_TASK, ignore_result=True)
def experiment_attempt_run(attempt_id: str) -> None:
    """Carry out one learner's attempt in the jobs worker (queued by the experiment page)."""
    attempt_work(attempt_id=attempt_id)

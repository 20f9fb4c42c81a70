"""The lessons app's periodic job, run by the jobs worker's embedded beat (teachlab/celery.py):
prune old anonymous learners every hour."""

from teachlab.celery import app


@app.task(name="teachlab.learners_prune", ignore_result=True)
def learners_prune_task() -> int:
    from lessons.pruning import learners_prune

    return learners_prune()

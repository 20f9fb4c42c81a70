"""Run many experiments at once without letting them disturb each other.

Two experiments may overlap only when they touch different broker databases: a crash on one
lane, or a storm of copies, must not leak into another experiment's numbers. Lanes that share
a Redis database (redis-short and redis-shared-long) count as one, because their workers
sweep each other's messages; RabbitMQ lanes count by queue. That keeps the whole set within a
few minutes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from teachlab.core.dbthreads import closes_connections, connection_release
from teachlab.lab.experiments.catalog import Experiment
from teachlab.lab.experiments.runner import experiment_execute
from teachlab.lab.runs.lanes import lane_get


def brokers_touched(experiment: Experiment) -> set[str]:
    """A Redis database is shared by every queue on it (one `unacked` hash, swept by all its
    workers); a RabbitMQ queue keeps its deliveries to itself, so each one counts apart."""
    touched = set()
    for name in experiment.lanes:
        lane = lane_get(name)
        touched.add(lane.broker_url if lane.is_redis else f"{lane.broker_url}#{lane.queue}")
    return touched


def experiments_run_many(
    *,
    experiments: list[Experiment],
    learner,
    on_result: Callable[[dict], None] | None = None,
    on_progress: Callable[[str, str], None] | None = None,
) -> list[dict]:
    """Every experiment once, overlapping those on separate brokers; results in catalog order."""
    pending = list(experiments)
    busy: dict[str, set[str]] = {}
    results: dict[str, dict] = {}
    changed = threading.Condition()

    def work(experiment: Experiment) -> None:
        try:
            result = experiment_execute(
                experiment=experiment,
                learner=learner,
                progress=(lambda text: on_progress(experiment.slug, text)) if on_progress else None,
            )
        except Exception as exc:  # one broken experiment must not stop the table
            result = {
                "slug": experiment.slug,
                "title": experiment.title,
                "passed": False,
                "checks": [],
                "errors": [f"{type(exc).__name__}: {exc}"],
                "runs": {},
                "prediction": {},
                "seconds": 0,
            }
        with changed:
            results[experiment.slug] = result
            busy.pop(experiment.slug, None)
            changed.notify_all()
        if on_result is not None:
            on_result(result)

    with changed:
        while pending or busy:
            taken = set().union(*busy.values()) if busy else set()
            startable = next((e for e in pending if not brokers_touched(e) & taken), None)
            if startable is None:
                connection_release()
                changed.wait(timeout=1)
                continue
            pending.remove(startable)
            busy[startable.slug] = brokers_touched(startable)
            threading.Thread(
                target=closes_connections(work), args=(startable,), daemon=True
            ).start()
    return [results[e.slug] for e in experiments]


def batch_seconds(*, experiments: list[Experiment]) -> float:
    """How long `experiments_run_many` takes at most: the same schedule played with each
    experiment's longest time (its waits and `within` limits), for the CI budget."""
    pending = list(experiments)
    running: list[tuple[float, set[str]]] = []
    now = 0.0
    while pending or running:
        taken = set().union(*(brokers for _end, brokers in running))
        startable = next((e for e in pending if not brokers_touched(e) & taken), None)
        if startable is not None:
            pending.remove(startable)
            running.append((now + startable.seconds, brokers_touched(startable)))
            continue
        running.sort(key=lambda item: item[0])
        now, _brokers = running.pop(0)
    return now

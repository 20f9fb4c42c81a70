"""One Celery app per lane (its own broker, queue and timeout), and the worker entry point:

python -m teachlab.lab.worker.celery_app --lane redis-short --name redis-short-1
"""

from __future__ import annotations

import argparse
import os
import sys

from celery import Celery
from django.conf import settings
from kombu import Exchange, Queue

from teachlab.lab.runs.lanes import Lane, lane_get, worker_hostname

_apps: dict[tuple, Celery] = {}


def _configure(app: Celery, lane: Lane) -> None:
    app.conf.update(
        broker_url=lane.broker_url,
        broker_transport_options=lane.transport_options(),
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=2,
        broker_connection_max_retries=3,
        task_default_queue=lane.queue,
        task_ignore_result=True,
        result_backend=None,
        task_serializer="json",
        accept_content=["json"],
        enable_utc=True,
        timezone="UTC",
        # tasks sleep; threads keep a worker to one process (prefork only where a lane
        # shows what a dead pool child does)
        worker_pool=lane.pool,
        worker_concurrency=lane.concurrency,
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        task_send_sent_event=False,
        worker_enable_remote_control=False,  # the lab's own registry (workers.py) lists them
    )
    if lane.pool == "prefork" and settings.LAB_WORKER_MAX_MEMORY_MB > 0:
        # replaces a pool child after a task leaves it past the ceiling (KiB); the parent,
        # which holds waiting deliveries, has the heartbeat's check (workers.py)
        app.conf.worker_max_memory_per_child = settings.LAB_WORKER_MAX_MEMORY_MB * 1_000_000 // 1024
    app.conf.update(lane.celery)
    if lane.prefetch_multiplier is not None:
        app.conf.worker_prefetch_multiplier = lane.prefetch_multiplier
    if lane.kind == "rabbit":
        # Native delayed delivery refuses a direct exchange (BROKER-FACTS 6): a quorum queue
        # bound to a topic exchange lets RabbitMQ hold the countdown instead of the worker.
        # A lane may ask for a direct exchange to show what happens without it.
        exchange = Exchange(lane.queue, type=lane.exchange_type)
        app.conf.update(
            task_queues=[
                Queue(
                    lane.queue,
                    exchange,
                    routing_key=lane.queue,
                    queue_arguments={"x-queue-type": "quorum", **lane.queue_arguments},
                )
            ],
            task_default_exchange=lane.queue,
            task_default_exchange_type=lane.exchange_type,
            task_default_routing_key=lane.queue,
            broker_native_delayed_delivery_queue_type="quorum",
        )


def lane_app(lane: str | Lane) -> Celery:
    """The lane's Celery app with the lab tasks registered (one per process and broker URL)."""
    lane = lane_get(lane)
    key = (lane.name, lane.broker_url, lane.visibility_timeout)
    app = _apps.get(key)
    if app is None:
        from teachlab.lab.worker.tasks import register_tasks

        app = Celery(f"lab-{lane.name}", set_as_current=False)
        _configure(app, lane)
        register_tasks(app)
        _apps[key] = app
    return app


def worker_args(*, hostname: str, lane: Lane, loglevel: str) -> list[str]:
    """The worker command line every lab lane's workers share, the control lane's too."""
    return [
        "worker",
        "--hostname",
        hostname,
        "--queues",
        lane.queue,
        "--loglevel",
        loglevel,
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run one lab worker process for one lane.")
    parser.add_argument("--lane", required=True)
    parser.add_argument("--name", required=True, help="worker name, e.g. redis-short-1")
    parser.add_argument("--loglevel", default=os.environ.get("TEACHLAB_WORKER_LOGLEVEL", "INFO"))
    args = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "teachlab.settings")
    import django

    django.setup()
    from teachlab.lab.worker import signals

    lane = lane_get(args.lane)
    signals.worker_identity.update(name=args.name, lane=lane.name)
    app = lane_app(lane)
    app.worker_main(
        worker_args(hostname=worker_hostname(args.name), lane=lane, loglevel=args.loglevel)
    )


if __name__ == "__main__":
    main(sys.argv[1:])

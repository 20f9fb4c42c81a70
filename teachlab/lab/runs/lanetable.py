"""Every lane the lab can fire at, in one table (lanes.py reads it): adding a lane is one more
entry here (or in settings.LAB_EXTRA_LANES), nothing else changes."""

from __future__ import annotations

# `broker` is "redis" (with `db`, a database number on broker_redis_url(), or on the
# noeviction server's with `server: noeviction`) or "rabbit"
# (settings.RABBIT_URL). Sweep options: kombu restores stale unacked messages only every
# interval x throttle seconds (10 x 10 by default, BROKER-FACTS 1); 1 x 1 puts a stale
# message back about a second after its visibility timeout.
LANE_TABLE: list[dict] = [
    {
        "name": "redis-short",
        "broker": "redis",
        "db": 1,
        "visibility_timeout": 10,
        "title": "Redis, 10 s visibility timeout",
        "summary": "A countdown longer than 10 s is handed out again every 10 s while it waits.",
    },
    {
        "name": "redis-long",
        "broker": "redis",
        "db": 2,
        "visibility_timeout": 60,
        "title": "Redis, 60 s visibility timeout",
        "summary": "The usual fix, scaled down: a timeout longer than any countdown you fire.",
    },
    {
        "name": "rabbit-quorum",
        "broker": "rabbit",
        "title": "RabbitMQ quorum queue",
        "summary": "Native delayed delivery: the broker holds the wait, the worker holds nothing.",
    },
    {
        # Experiment 12: a second consumer group on redis-short's database with a longer
        # timeout. The unacked hash is per database, so redis-short's 10 s sweep restores
        # these messages too.
        "name": "redis-shared-long",
        "broker": "redis",
        "db": 1,
        "visibility_timeout": 60,
        "workers": 1,
        "listed": False,
        "title": "Redis, 60 s timeout, sharing redis-short's database",
        "summary": "Its own queue and timeout, but redis-short's workers restore its messages.",
    },
    # Lanes of the guided experiments only (lessons/experiments/), each on a database or queue
    # of its own so that `lab experiment --all` can run them beside the others.
    {
        # busy-warm-shutdown: one task at a time per worker (prefetch 1 plus one slot per
        # waiting ETA message), so which worker holds what follows from the order of firing.
        "name": "redis-busy",
        "broker": "redis",
        "db": 7,
        "visibility_timeout": 30,
        "concurrency": 1,
        "prefetch_multiplier": 1,
        "listed": False,
        "title": "Redis, 30 s timeout, one task at a time per worker",
        "summary": "A worker busy with a long task holds a waiting countdown message too.",
    },
    {
        # The fast sweep of redis-short on a database of its own, for the experiments that
        # compare it with kombu's default sweep (copies against wait / timeout).
        "name": "redis-fast-sweep",
        "broker": "redis",
        "db": 8,
        "visibility_timeout": 10,
        "workers": 1,
        "listed": False,
        "title": "Redis, 10 s timeout, restore sweep every second",
        "summary": "Copies come about ceil(wait / timeout) times; the sweep adds about a second.",
    },
    {
        # The experiments that split their checks by release (sweep-refused-on-redis-6-0,
        # restore-interval-before-kombu-5-7): redis-fast-sweep's settings on a database of its
        # own, so their two-minute watch does not lengthen that lane's chain in `--all`.
        "name": "redis-versions",
        "broker": "redis",
        "db": 13,
        "visibility_timeout": 10,
        "workers": 1,
        "listed": False,
        "title": "Redis, 10 s timeout, restore sweep every second (release checks)",
        "summary": "Where a kombu or Redis release changes what the sweep does.",
    },
    {
        # quorum-direct-prefetch: Celery's default direct exchange. Native delayed delivery
        # refuses it, so the worker holds ETA messages, and with a quorum queue Celery turns
        # the prefetch count static (celery.worker.consumer.tasks.Tasks.qos_global): each
        # waiting ETA message keeps one of the prefetch slots (here 2) until it runs.
        "name": "rabbit-quorum-direct",
        "broker": "rabbit",
        "exchange_type": "direct",
        "concurrency": 2,
        "prefetch_multiplier": 1,
        "workers": 1,
        "listed": False,
        "title": "RabbitMQ quorum queue on a direct exchange",
        "summary": "The worker holds countdowns itself, and they take its prefetch slots.",
    },
    {
        # quorum-delivery-limit: RabbitMQ drops a message returned more than this many times
        # (3.10 has no default limit; 4.0 sets 20).
        "name": "rabbit-delivery-limit",
        "broker": "rabbit",
        "queue_arguments": {"x-delivery-limit": 1},
        "listed": False,
        "title": "RabbitMQ quorum queue with x-delivery-limit 1",
        "summary": "A message that comes back a second time is dropped.",
    },
]

# The worker setting the connection-loss experiment shows (off by default in 5.7; Celery says
# 6.0 will turn it on).
CANCEL_ON_CONNECTION_LOSS = {"worker_cancel_long_running_tasks_on_connection_loss": True}

# Production Celery's default pool: a task runs in a forked child, so a child can die (the
# OOM killer, a segfault) under a parent that lives on and settles the message itself
# (celery.worker.request.Request.on_failure, WorkerLostError). One worker with one child,
# so "the child" is never ambiguous.
LANE_TABLE += [
    {
        "name": "redis-prefork",
        "broker": "redis",
        "db": 9,
        "visibility_timeout": 30,
        "pool": "prefork",
        "workers": 1,
        "concurrency": 1,
        # Room for one more message: a consumer that may not take one issues no BRPOP, so
        # it would not notice a closed connection while its task runs.
        "prefetch_multiplier": 2,
        "celery": CANCEL_ON_CONNECTION_LOSS,
        "listed": False,
        "title": "Redis, prefork pool (one child)",
        "summary": "A killed pool child under a live parent: WorkerLostError, not a crash.",
    },
    {
        "name": "rabbit-prefork",
        "broker": "rabbit",
        "pool": "prefork",
        "workers": 1,
        "concurrency": 1,
        "prefetch_multiplier": 1,
        "listed": False,
        "title": "RabbitMQ quorum queue, prefork pool (one child)",
        "summary": "A requeued delivery raises the quorum queue's delivery count.",
    },
    {
        # redis-prefork's settings on the lab's usual pool, for the experiment that cuts the
        # connection: the threads pool has no terminate_job, so the cancel cannot stop a body.
        # Two threads, so the redelivered copy can start beside the old one.
        "name": "redis-threads-cancel",
        "broker": "redis",
        "db": 10,
        "visibility_timeout": 30,
        "workers": 1,
        "concurrency": 2,
        "prefetch_multiplier": 1,
        "celery": CANCEL_ON_CONNECTION_LOSS,
        "listed": False,
        "title": "Redis, threads pool, cancelling long tasks on connection loss",
        "summary": "The cancel fails on threads: the old body runs on beside its redelivery.",
    },
    {
        # lost-binding-drops-restore: a topic exchange of its own, so kombu publishes and
        # restores through the exchange's binding set (`_lookup`), not the anonymous exchange
        # Celery uses for a direct queue. A short timeout makes the restore come soon.
        "name": "redis-named-exchange",
        "broker": "redis",
        "db": 11,
        "visibility_timeout": 3,
        "workers": 1,
        "celery": {
            "task_default_exchange": "lab-redis-named-exchange",
            "task_default_exchange_type": "topic",
            "task_default_routing_key": "lab-redis-named-exchange",
        },
        "listed": False,
        "title": "Redis, a topic exchange of its own, 3 s timeout",
        "summary": "Publishing and restoring read the exchange's binding set.",
    },
]

# noeviction-loses-popped: a Redis server of its own (settings.LAB_NOEVICTION_REDIS_URL),
# started with NOEVICTION_SERVER_ARGS, since maxmemory is a whole server's setting: filling it
# on the shared broker would stop every other lane. One worker with one thread.
NOEVICTION_SERVER_ARGS = ["--maxmemory", "8mb", "--maxmemory-policy", "noeviction"]
LANE_TABLE.append(
    {
        "name": "redis-noeviction",
        "broker": "redis",
        "server": "noeviction",
        "db": 0,
        "visibility_timeout": 30,
        "workers": 1,
        "concurrency": 1,
        "prefetch_multiplier": 1,
        "listed": False,
        "title": "Redis with a small maxmemory and noeviction, a server of its own",
        "summary": "At the memory limit a worker still pops a message it cannot record.",
    }
)

# The plain-Celery control (teachlab/lab/worker/control.py): redis-short's entry on its own database,
# so its transport options and worker count are redis-short's by construction.
LANE_TABLE.append(
    {
        **LANE_TABLE[0],
        "name": "redis-control",
        "db": 6,
        "listed": False,
        "plain": True,
        "title": "Plain Celery control for redis-short",
        "summary": "No lab signal handlers: counts executions only (`lab fidelity`).",
    }
)

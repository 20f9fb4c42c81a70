"""How long the lab's signal handlers took in this worker process: signals.py records them,
the heartbeat (workers.py) reports their percentiles, so the overhead goal is measured where
it is spent. A module of its own so the handlers and the heartbeat need not import each
other."""

from __future__ import annotations

import collections

# Seconds each lab handler took, the latest deliveries only: the heartbeat reports their
# percentiles (workers.py), so the overhead goal is measured where it is spent.
# Wall time (what the consumer waits) and this thread's CPU time (the handler's own work).
handler_seconds: collections.deque[float] = collections.deque(maxlen=20_000)
handler_cpu_seconds: collections.deque[float] = collections.deque(maxlen=20_000)
# The same for task_received alone: it runs in the consumer, so its wall time is what delays
# taking the next message off the list; the others run in pool threads, beside task bodies.
received_seconds: collections.deque[float] = collections.deque(maxlen=20_000)
received_cpu_seconds: collections.deque[float] = collections.deque(maxlen=20_000)


def handler_times_clear() -> None:
    for times in (handler_seconds, handler_cpu_seconds, received_seconds, received_cpu_seconds):
        times.clear()

"""Drill: the lab's Redis (nothing on disk, as scripts/run and the tests start it) is killed in
the middle of a run and started again four seconds later.

What is lost with it, by design of the broker: every message in the queue and in kombu's
`unacked` hash, so nothing is restored after the visibility timeout; and the countdown copies
the workers held, because Celery cancels its scheduled requests when the broker connection
drops (celery 5.7.0, celery/worker/consumer/consumer.py, Consumer.on_close). Also lost: any
event appended to a run's log and not yet read by the recorder (the recorder reads within a
fraction of a second; the drill waits until it has caught up, so here that is nothing).

What the app keeps: every row already stored (each delivery the broker made before the
restart, counted independently through MONITOR), and bodies already running finish and are
recorded under new seqs that carry on from the stored ones, so the run settles `done`; a body
that ends while Redis is away has its worker try the append again until Redis is back.
"""

from __future__ import annotations

import time

import pytest

from tests.drills.stack import (
    DeliveryCount,
    EventLoopThread,
    RunWatcher,
    fire_run,
    run_events,
    run_status,
    run_task_ids,
    wait_until,
)
from tests.support.http import Visitor

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.browser]

RUNNING = 8  # tasks whose bodies run through the restart
DURATION = 9  # seconds each body sleeps
HELD = 4  # countdown tasks the workers hold when Redis goes
COUNTDOWN = 11
DOWN_SECONDS = 4
ENDING = 2  # tasks whose bodies end while Redis is down
ENDING_DURATION = 4  # started and stored within 4 s, so they end while Redis is down
WATCHERS = 5


def _kinds(events, kind: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for _, k, task_id, _copy in events:
        if k == kind:
            found[task_id] = found.get(task_id, 0) + 1
    return found


def _log(client, run_id: str) -> list[tuple[int, str, str]]:
    """(seq, kind, task id) of every event entry in the run's log, as Redis holds it now."""
    return [
        (int(entry_id.split("-")[0]), fields["k"], fields.get("ti", ""))
        for entry_id, fields in client.xrange(f"lab:stream:{run_id}")
        if fields.get("k") != "done"
    ]


def test_the_labs_redis_restarted_mid_run_shows_a_banner_and_loses_only_what_the_broker_held(
    drill_stack, browser
):
    from playwright.sync_api import expect

    server, lab_redis = drill_stack.server, drill_stack.redis
    app = lab_redis.client(3)
    count = DeliveryCount(lab_redis.url, db=1).resume()
    visitor = Visitor()
    running = fire_run(server.url, visitor, count=RUNNING, duration=DURATION)
    held = fire_run(server.url, visitor, count=HELD, countdown=COUNTDOWN)
    fired_at = time.monotonic()
    session = visitor.cookie("sessionid")

    loop = EventLoopThread()
    watchers = [RunWatcher(server.url, running, session) for _ in range(WATCHERS)]
    for w in watchers:
        loop.loop.call_soon_threadsafe(w.start)
    context = browser.new_context()
    context.add_cookies([{"name": "sessionid", "value": session, "url": server.url}])
    page = context.new_page()
    try:
        page.goto(f"{server.url}/lab/runs/{running}/")
        expect(page.locator("#live-status")).to_have_text("Live: connected.", timeout=15_000)

        # Every body running and every countdown held, and the recorder caught up with both logs.
        def in_flight():
            a, b = run_events(running), run_events(held)
            return (
                len(_kinds(a, "started")) == RUNNING
                and len(_kinds(b, "received")) == HELD
                and len(a) == len(_log(app, running))
                and len(b) == len(_log(app, held))
            )

        wait_until(in_flight, timeout=30, what="bodies running, countdowns held, all stored")
        # Bodies that end while Redis is away: their workers keep trying to append the event.
        ending = fire_run(server.url, visitor, count=ENDING, duration=ENDING_DURATION)
        wait_until(
            lambda: len(_kinds(run_events(ending), "started")) == ENDING,
            timeout=DOWN_SECONDS - 0.5,
            every=0.1,
            what="the short bodies running",
        )
        runs = (running, held, ending)
        before = {run: _log(app, run) for run in runs}
        stored_before = {run: run_events(run) for run in runs}

        lab_redis.stop()
        down_at = time.monotonic()
        wait_until(
            lambda: all(w.banner and w.banner[-1] for w in watchers),
            timeout=10,
            what="every open page showing the Redis banner",
        )
        expect(page.locator("#redis-banner")).to_be_visible(timeout=10_000)
        expect(page.locator("#redis-banner")).to_contain_text("not answering")
        time.sleep(max(0.0, DOWN_SECONDS - (time.monotonic() - down_at)))
        lab_redis.start()
        count.resume()  # before the workers' next reconnect attempt

        wait_until(
            lambda: all(w.banner and not w.banner[-1] for w in watchers),
            timeout=20,
            what="every page's banner cleared once Redis answered again",
        )
        expect(page.locator("#redis-banner")).to_be_hidden(timeout=20_000)
        # The channel layer came back too: the monitor's broker panel reaches every page again.
        panels = [w.broker_frames for w in watchers]
        wait_until(
            lambda: all(w.broker_frames > n for w, n in zip(watchers, panels, strict=True)),
            timeout=15,
            what="the broker panel updating again",
        )
        # Lost with the broker: its queue and its unacked hash came back empty.
        broker = lab_redis.client(1)
        assert broker.llen("lab-redis-short") == 0
        assert broker.hlen("unacked") == 0

        wait_until(lambda: run_status(running) == "done", timeout=45, what="the run settling")
        wait_until(lambda: run_status(ending) == "done", timeout=15, what="the short run settling")
        wait_until(lambda: all(w.done for w in watchers), timeout=15, what="pages told it is done")
        expect(page.locator("#counters [data-counter=executions]")).to_have_text(str(RUNNING))
        # Past the held countdowns' due time, with margin, to see that they never ran.
        time.sleep(max(0.0, COUNTDOWN + 4 - (time.monotonic() - fired_at)))
    finally:
        context.close()
        for w in watchers:
            loop.call(w.close())
        loop.close()
        count.close()

    after = {run: run_events(run) for run in runs}
    for run in runs:
        # Kept: every row stored before the restart, and every entry the log held then.
        assert set(stored_before[run]) <= set(after[run])
        stored = {(seq, kind, task) for seq, kind, task, _ in after[run]}
        assert set(before[run]) <= stored, "an event read before the restart was not kept"
        # Nothing doubled: one row per seq, numbered without a gap across the restart.
        seqs = [seq for seq, *_ in after[run]]
        assert seqs == list(range(1, len(seqs) + 1)), seqs
        # Every delivery the broker made (all before the restart) is a stored receipt.
        task_ids = run_task_ids(run)
        delivered = count.per_task(task_ids)
        assert sum(delivered.values()) == len(task_ids)
        assert dict(delivered) == _kinds(after[run], "received")

    # The running bodies finished after the restart and were recorded after the stored seqs.
    finished = [e for e in after[running] if e[1] == "finished"]
    assert len(finished) == RUNNING and len(_kinds(after[running], "finished")) == RUNNING
    resumed_at = len(before[running])
    assert all(seq > resumed_at for seq, *_ in finished)
    assert app.get(f"lab:run:{running}:reset") == str(resumed_at)
    # The short bodies ended during the outage; their events were appended once it was over.
    ended = [e for e in after[ending] if e[1] == "finished"]
    assert len(ended) == ENDING and all(seq > len(before[ending]) for seq, *_ in ended)
    # The held countdowns were lost with the broker: received, never run, never redelivered.
    assert _kinds(after[held], "started") == {}
    assert run_status(held) == "running"  # it waits for its deadline, then times out

    for w in watchers:
        assert not w.doubled, w.doubled
        assert sorted(w.rows.values()) == sorted(
            seq for seq, kind, *_ in after[running] if kind == "received"
        )
        assert sorted(w.outcomes.values()) == ["executed"] * RUNNING

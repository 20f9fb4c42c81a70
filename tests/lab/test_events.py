"""Events reach the run's channel group live, one message per delivery, HTML rendered once."""

import asyncio
import time

import pytest
from channels.layers import get_channel_layer

pytestmark = [pytest.mark.broker, pytest.mark.slow]


async def _listen(group: str, until: float) -> list[dict]:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    got = []
    try:
        while time.time() < until:
            try:
                message = await asyncio.wait_for(layer.receive(channel), timeout=1)
            except TimeoutError:
                continue
            got.append(message)
            if message["type"] == "lab.done":
                break
    finally:
        await layer.group_discard(group, channel)
    return got


def test_a_redelivered_copy_arrives_live_in_the_run_group_as_its_own_event(lab_stack):
    proc = lab_stack.lab_popen(
        "run", "--lane", "redis-short", "--countdown", "12", "--json", "--learner", "test-events"
    )
    first = proc.stderr.readline()  # "run <id> on redis-short: ..." (the summary goes to stdout)
    run_id = first.split()[1]
    messages = asyncio.run(_listen(f"lab.run.{run_id}", until=time.time() + 25))
    proc.communicate(timeout=30)

    # A burst may come as one `lab.events` message (LAB_EVENT_BATCHES); each event is still its own.
    events = [m["event"] for m in messages if m["type"] == "lab.event"]
    events += [e for m in messages if m["type"] == "lab.events" for e in m["events"]]
    events.sort(key=lambda e: e["seq"])
    received = [e for e in events if e["kind"] == "received"]
    # Joined after firing, so copy 1 may have gone by; the restored copy comes later, live.
    again = [e for e in received if e["copy"] == 2]
    assert len(again) == 1, events
    assert again[0]["redelivered"] is True
    assert 9.5 <= again[0]["since_publish"] <= 12, again[0]
    assert again[0]["counts"]["receipts"] == 2
    finished = [e for e in events if e["kind"] == "finished"]
    assert sorted(e["copy"] for e in finished) == [1, 2]
    # Numbered in one sequence per run; two workers' messages may cross on the way, so a
    # page orders by seq rather than by arrival.
    seqs = sorted(e["seq"] for e in events)
    assert seqs == list(range(seqs[0], seqs[-1] + 1))
    assert all(e["run"] == run_id for e in events)
    try:
        import teachlab.lab.fragments  # noqa: F401
    except ImportError:
        pass
    else:
        assert all(m.get("html") for m in messages if m["type"] in {"lab.event", "lab.events"})
    done = [m for m in messages if m["type"] == "lab.done"]
    assert done and done[0]["summary"]["receipts"] == 2

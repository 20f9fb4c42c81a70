"""The room hub's lab frames (teachlab/workshop/hub.py): events gathered into frames, and none
left waiting when they arrive while a frame is still going out to a slow room."""

from __future__ import annotations

import asyncio

import pytest

from teachlab.workshop import fragments, hub
from tests.support.loops import on_a_loop_of_its_own


class SlowScreen:
    """A member whose every frame takes `delay` seconds to go out (300 phones, one by one)."""

    is_presenter = False
    is_screen = False
    seat_id = 1

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.frames: list[str] = []

    async def hub_push(self, html: str, *, close: bool = False, code: int | None = None) -> None:
        await asyncio.sleep(self.delay)
        self.frames.append(html)


def _frames_of_seqs(events: list[dict]) -> list[str]:
    return [",".join(str(e["seq"]) for e in events)]


def test_events_that_arrive_during_a_fan_out_go_out_next_without_waiting_for_another(
    monkeypatch,
):
    monkeypatch.setattr(fragments, "run_event_frames", _frames_of_seqs)

    async def scenario() -> list[str]:
        room = hub.RoomHub(room_id=1)
        screen = SlowScreen(delay=0.2)
        room.members.add(screen)
        room.take_event({"event": {"seq": 1}})
        await asyncio.sleep(hub.RUN_BATCH_SECONDS + 0.05)  # frame 1 is going out now
        room.take_event({"event": {"seq": 2}})
        room.take_event({"event": {"seq": 3}})
        await asyncio.sleep(0.6)  # no further event comes
        return screen.frames

    assert on_a_loop_of_its_own(scenario) == ["1", "2,3"]


def test_a_burst_within_the_batch_window_goes_out_as_one_frame(monkeypatch):
    monkeypatch.setattr(fragments, "run_event_frames", _frames_of_seqs)

    async def scenario() -> list[str]:
        room = hub.RoomHub(room_id=1)
        screen = SlowScreen(delay=0)
        room.members.add(screen)
        for seq in range(1, 6):
            room.take_event({"event": {"seq": seq}})
            room.take_event({"event": {"seq": seq}})  # a repeat of a number already held is dropped
        await asyncio.sleep(hub.RUN_BATCH_SECONDS + 0.1)
        return screen.frames

    assert on_a_loop_of_its_own(scenario) == ["1,2,3,4,5"]


@pytest.mark.django_db(transaction=True)
def test_the_end_of_a_run_sends_its_last_receipts_then_the_finished_counters(monkeypatch):
    """While a run goes on the counters say the amplification comes after the run; at its
    end every screen gets the counters with the amplification, after the last receipts."""
    monkeypatch.setattr(fragments, "run_event_frames", _frames_of_seqs)

    async def scenario() -> list[str]:
        room = hub.RoomHub(room_id=0)  # no such room: nothing stored, the frames still go
        screen = SlowScreen(delay=0)
        room.members.add(screen)
        room.take_event({"event": {"seq": 7}})
        summary = {"tasks": 2, "receipts": 5, "executions": 5, "amplification": 2.5}
        await room.dispatch({"type": "lab.done", "run": "r", "summary": summary})
        return screen.frames

    frames = on_a_loop_of_its_own(scenario)
    assert frames[0] == "7"
    assert 'id="counters"' in frames[1] and 'data-seq="final"' in frames[1]
    assert "2.50×" in frames[1] and "after the run" not in frames[1]

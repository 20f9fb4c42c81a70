"""Turn a lab run's stored events (docs/reference/lab.md, "The event dict") into the
Observation the checks read."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from teachlab.lab.experiments.metrics import FAILED, Event, Observation


def event_from_dict(event: Mapping) -> Event:
    return Event(
        kind=event["kind"],
        task_id=event["task_id"],
        t=float(event["t"]),
        worker=event.get("worker") or "",
        redelivered=bool(event.get("redelivered")),
        retrying=event["kind"] == FAILED and bool((event.get("data") or {}).get("retrying")),
        worker_lost=event["kind"] == FAILED
        and "WorkerLostError" in str((event.get("data") or {}).get("error", "")),
        delivery_count=(event.get("data") or {}).get("delivery_count"),
    )


def due_times(
    *, task_ids: list[str], params: Mapping, events: Iterable[Mapping]
) -> dict[str, float]:
    """Seconds after firing each task is due: its ETA when an event carries one, else the
    schedule the parameters describe (a feeder publishes with no countdown at the due time)."""
    countdown = float(params.get("countdown") or 0)
    spacing = float(params.get("spacing") or 0)
    due = {tid: countdown + spacing * i for i, tid in enumerate(task_ids)}
    for event in events:
        if event.get("eta") and event["task_id"] in due and not params.get("feeder"):
            fired_at = float(event["at"]) - float(event["t"])
            due[event["task_id"]] = round(float(event["eta"]) - fired_at, 3)
    return due


def observation_from_events(
    *,
    task_ids: list[str],
    params: Mapping,
    events: list[Mapping],
    lane: str = "",
    duration: float | None = None,
    visibility_timeout: float | None = None,
) -> Observation:
    converted = [event_from_dict(e) for e in events]
    if duration is None:
        duration = max((e.t for e in converted), default=0.0)
    return Observation(
        tasks=due_times(task_ids=task_ids, params=params, events=events),
        events=converted,
        duration=duration,
        lane=lane,
        params=dict(params),
        visibility_timeout=visibility_timeout,
    )


def observation_for_run(*, run, duration: float | None = None) -> Observation:
    from teachlab.lab.runs.reading import run_events

    return observation_from_events(
        task_ids=list(run.task_ids),
        params=run.params,
        events=run_events(run=run),
        lane=run.lane,
        duration=duration,
        visibility_timeout=run.visibility_timeout,
    )

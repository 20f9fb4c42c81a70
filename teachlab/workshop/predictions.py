"""Shared lab runs: the room predicts a number, the instructor fires, everyone compares."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from teachlab.workshop import broadcast, content
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import Prediction, Room, Seat, SharedRun
from teachlab.workshop.selectors import room_locked, seats_removed

MAX_PREDICTION = 100_000
# The run parameters a room's own run may set; the lab's run-parameter schema checks them.
ROOM_PARAMS = ("count", "countdown", "spacing", "duration", "acks_late", "guard")


def shared_run_open(
    *,
    room: Room,
    experiment_slug: str = "",
    lane: str = "",
    params: dict | None = None,
    prompt: str = "",
    metric: str = "receipts",
) -> SharedRun:
    """Open a run for the room to predict: an experiment's preset, or parameters given here."""
    room.require_open()
    if experiment_slug:
        exp = next((e for e in content.room_experiments() if e.slug == experiment_slug), None)
        if exp is None:
            raise WorkshopError("That experiment has no number to predict, or does not exist.")
        title, lane, params = exp.title, exp.lane, exp.params
        prompt, metric = exp.prompt or prompt, exp.metric
    else:
        if lane not in dict(content.lanes()):
            raise WorkshopError("Pick one of the lab's lanes.")
        params = clean_params(params or {})
        title = f"{params.get('count', 1)} task(s), countdown {params.get('countdown', 0):g} s on {lane}"
    if metric not in content.METRICS:
        raise WorkshopError("Pick what the room predicts: receipts, executions, duplicates…")
    prompt = " ".join((prompt or "").split())[:300] or f"How many {content.METRICS[metric]}?"
    with transaction.atomic():
        room_locked(room.pk)
        shared = SharedRun.objects.create(
            room=room,
            title=title[:200],
            experiment_slug=experiment_slug,
            prompt=prompt,
            metric=metric,
            params={"lane": lane, **params},
        )
        room.shared_run = shared
        room.save(update_fields=["shared_run"])
    broadcast.run_changed(room=room)
    return shared


def clean_params(raw: dict) -> dict:
    """A room's own run parameters, checked by the lab's schema and held to the lab's
    per-run limits, so the room refuses what the lab form refuses, in the same words. Only
    the parameters given are kept (the rest stay the lab's defaults)."""
    from teachlab.lab.runs.errors import LabError
    from teachlab.lab.runs.params import params_limits_check, params_parse

    unknown = sorted(set(raw) - set(ROOM_PARAMS))
    if unknown:
        raise WorkshopError(f"A room's run does not take {', '.join(unknown)}.")
    try:
        p = params_parse(raw)
        params_limits_check(p)
    except LabError as exc:
        raise WorkshopError(str(exc)) from None
    given = {
        name
        for name, value in raw.items()
        if value is not None and value is not False and str(value).strip()
    }
    return {name: value for name, value in p.as_dict().items() if name in given}


def prediction_make(*, seat: Seat, shared_run_id: int, value) -> Prediction:
    """One guess per seat per run; a new guess before the run is fired replaces the old one.

    Like votes, the presenter's spread is redrawn by the caller, once per burst of guesses.
    """
    result = predictions_make(room_id=seat.room_id, guesses=[(seat.pk, shared_run_id, value)])[0]
    if isinstance(result, WorkshopError):
        raise result
    return result


def _number(value) -> int | WorkshopError:
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        return WorkshopError("Your prediction must be a whole number.")
    if not 0 <= number <= MAX_PREDICTION:
        return WorkshopError(f"Predict a number from 0 to {MAX_PREDICTION}.")
    return number


def predictions_make(*, room_id: int, guesses: list[tuple]) -> list[Prediction | WorkshopError]:
    """Many (seat id, shared run id, value) guesses in one room in one transaction, as
    votes.votes_cast does for votes: each gets its Prediction or the WorkshopError that
    refuses it, with the same checks in the same order as one at a time."""
    numbers = [_number(value) for _, _, value in guesses]
    results: list = [n if isinstance(n, WorkshopError) else None for n in numbers]
    if all(r is not None for r in results):
        return results
    with transaction.atomic():
        room = room_locked(room_id)  # a fire or close lands before or after
        try:
            room.require_open()
            shared = room.shared_run
        except WorkshopError as exc:
            return [r or exc for r in results]
        removed = seats_removed(
            seat_id for (seat_id, _, _), r in zip(guesses, results, strict=True) if r is None
        )
        fresh: dict[int, Prediction] = {}  # by seat: a seat's later guess in the batch wins
        for i, (seat_id, run_id, _) in enumerate(guesses):
            if results[i] is not None:
                continue
            if seat_id in removed:
                results[i] = WorkshopError("The instructor removed you from this room.")
            elif shared is None or shared.pk != run_id:
                results[i] = WorkshopError("That run is no longer open for predictions.")
            elif shared.fired_at is not None:
                results[i] = WorkshopError("The run has been fired; predictions are closed.")
            else:
                guess = Prediction(shared_run=shared, seat_id=seat_id, value=numbers[i])
                results[i] = fresh[seat_id] = guess
        if fresh:
            Prediction.objects.bulk_create(
                list(fresh.values()),
                update_conflicts=True,
                unique_fields=["shared_run", "seat"],
                update_fields=["value", "made_at"],
            )
    return results


def shared_run_fire(*, room: Room, instructor) -> SharedRun:
    """Fire the room's run through the lab (the instructor's learner owns it).

    Predictions close and every screen switches to the live view first; publishing a
    200-task run takes a while, and its receipts start arriving before it is done.
    """
    from lessons.models import Learner
    from teachlab.lab.runs.errors import LabError
    from teachlab.lab.runs.firing import run_fire
    from teachlab.lab.runs.lanes import lane_get
    from teachlab.lab.runs.limits import run_cost_take
    from teachlab.lab.runs.params import params_parse

    room.require_open()
    shared = room.shared_run
    if shared is None:
        raise WorkshopError("Open a run for the room first.")
    now = timezone.now()
    with transaction.atomic():
        room_locked(room.pk)  # a guess being stored lands before predictions close
        fired = SharedRun.objects.filter(pk=shared.pk, fired_at__isnull=True).update(fired_at=now)
    if not fired:
        raise WorkshopError("This run has already been fired; open a new one to go again.")
    shared.fired_at = now
    broadcast.run_changed(room=room)
    learner, _ = Learner.objects.get_or_create(user=instructor)
    params = dict(shared.params)
    lane = params.pop("lane")
    try:
        # the instructor's own budgets do not apply, the workers' protections do
        run_cost_take(params_parse(params), lane_get(lane))
        run = run_fire(
            learner=learner,
            lane=lane,
            params=params,
            prediction=None,
            label=f"room:{room.code}",
            check_limits=False,  # the instructor fires for the room; the form has its own limits
        )
    except LabError as exc:
        SharedRun.objects.filter(pk=shared.pk).update(fired_at=None)
        shared.fired_at = None
        broadcast.run_changed(room=room)  # predictions open again
        raise WorkshopError(str(exc)) from None
    shared.run_id = run.id
    shared.save(update_fields=["run_id"])
    # Not a redraw (that would wipe the receipts already shown): only make sure every hub
    # follows the run, in case the early word from signals.run_saved was lost.
    broadcast.follow_run(room=room, run_id=run.id)
    return shared


def shared_run_finish(*, shared: SharedRun, summary: dict | None = None) -> bool:
    """Store what the run showed and tell the room; True once the outcome is stored (by this
    call or an earlier one). Idempotent: of several callers (the lab's settle signal, each
    server process's hub, the presenter's button) only the first stores and broadcasts."""
    from teachlab.lab.eventlog.settle import run_settle
    from teachlab.lab.models import Run
    from teachlab.lab.runs.reading import run_summary

    if shared.observed is not None:
        return True
    if not shared.run_id:
        return False
    if summary is None:
        run = Run.objects.filter(pk=shared.run_id).first()
        if run is None:
            return False
        run = run_settle(run)  # the monitor does this too; here for a room without one
        if run.status == Run.Status.RUNNING:
            raise WorkshopError("The run is still going: wait for its last receipts.")
        shared.refresh_from_db(fields=["observed", "settled_at"])
        if shared.observed is not None:  # settling it just now stored it (signals.py)
            return True
        summary = run_summary(run)
    observed = content.observed_value(summary, shared.metric)
    now = timezone.now()
    stored = SharedRun.objects.filter(pk=shared.pk, observed__isnull=True).update(
        observed=observed, settled_at=now
    )
    if stored:
        shared.observed, shared.settled_at = observed, now
        room = Room.objects.get(pk=shared.room_id)
        if room.shared_run_id == shared.pk:  # the room may have moved on to another run
            broadcast.run_changed(room=room)
        return True
    shared.refresh_from_db(fields=["observed", "settled_at"])
    return shared.observed is not None

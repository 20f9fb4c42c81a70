"""Session plans: an instructor's own, prepared before class, kept, exported and imported."""

from __future__ import annotations

import json

from teachlab.workshop import planformat, rooms
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import Plan


def plan_for(*, user, pk: int) -> Plan | None:
    """The user's own plan `pk`, or None: nobody else's plans are found, staff's included."""
    return Plan.objects.owned_by(user).filter(pk=pk).first()


def plan_create(*, owner, title: str, steps: list | None = None) -> Plan:
    if not rooms.can_create_rooms(user=owner):
        raise WorkshopError("Only staff accounts can prepare session plans.")
    return Plan.objects.create(
        owner=owner,
        title=planformat.title_clean(title),
        steps=planformat.steps_clean(steps or []),
    )


def plan_retitle(*, plan: Plan, title: str) -> Plan:
    plan.title = planformat.title_clean(title)
    plan.save(update_fields=["title", "updated_at"])
    return plan


def plan_step_add(*, plan: Plan, raw: dict) -> Plan:
    if len(plan.steps) >= planformat.MAX_STEPS:
        raise WorkshopError(f"A plan holds up to {planformat.MAX_STEPS} steps.")
    step = planformat.step_clean(raw, len(plan.steps) + 1)
    plan.steps = [*plan.steps, step]
    plan.save(update_fields=["steps", "updated_at"])
    return plan


def _index(plan: Plan, index: int) -> int:
    if not 0 <= index < len(plan.steps):
        raise WorkshopError("That step is not in the plan (it may have been removed already).")
    return index


def plan_step_remove(*, plan: Plan, index: int) -> Plan:
    index = _index(plan, index)
    plan.steps = plan.steps[:index] + plan.steps[index + 1 :]
    plan.save(update_fields=["steps", "updated_at"])
    return plan


def plan_step_move(*, plan: Plan, index: int, by: int) -> Plan:
    """Move a step up (by=-1) or down (by=1); at either end it stays where it is."""
    index = _index(plan, index)
    other = index + by
    if by in (-1, 1) and 0 <= other < len(plan.steps):
        steps = list(plan.steps)
        steps[index], steps[other] = steps[other], steps[index]
        plan.steps = steps
        plan.save(update_fields=["steps", "updated_at"])
    return plan


def plan_export(*, plan: Plan) -> bytes:
    doc = planformat.plan_document(title=plan.title, steps=plan.steps)
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()


def plan_import(*, owner, data: bytes) -> Plan:
    """A new plan of `owner`'s from an exported file; nothing is stored if any step is bad."""
    title, steps = planformat.plan_read(data)
    return plan_create(owner=owner, title=title, steps=steps)

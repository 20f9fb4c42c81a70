"""HTML for the room's screens, from the partials of the participant and presenter pages.

A partial is rendered once per role for a broadcast (never once per client), and the same
partial draws the full page, an htmx swap and a push on reconnect, so they cannot disagree.
"""

from __future__ import annotations

import time

from django.template.loader import render_to_string
from django.urls import NoReverseMatch, reverse

from teachlab.lab.params import params_bounds
from teachlab.workshop import content, predictions, roundstate, votes
from teachlab.workshop.models import Room, Seat

PARTICIPANT = "workshop/participant.html"
PRESENTER = "workshop/presenter.html"


def room_context(room: Room, *, seat: Seat | None = None, live: bool = False) -> dict:
    """Everything the room's partials read. `live` adds the lab's picture of a fired run."""
    question = content.question(room.question_slug)
    tier = room.tier or "prompt"
    cr = room.claim_round
    shared = room.shared_run
    ctx = {
        "room": room,
        "seat": seat,
        "question": question,
        "tier": tier,
        "tier_label": content.TIER_LABELS.get(tier, tier),
        "prompt_html": content.markdown(question.prompt) if question else "",
        "tier_html": content.markdown(question.tiers.get(tier, ""))
        if question and tier != "prompt"
        else "",
        "lesson_url": lesson_url(question, tier),
        "tiers": list(content.TIER_LABELS.items()),
        "claims": list(question.claims) if question else [],
        "claim_round": cr,
        "claim_html": content.markdown(cr.text) if cr else "",
        "why_html": content.markdown(cr.why) if cr else "",
        "truth_html": content.markdown(cr.truth) if cr else "",
        "tally": votes.tally(cr) if cr is not None else None,
        "my_vote": votes.vote_of(seat=seat, claim_round=cr),
        "shared": shared,
        "metric_label": content.METRICS.get(shared.metric, shared.metric) if shared else "",
        "spread": predictions.spread(shared) if shared else None,
        "outcome": predictions.outcome(shared) if shared else None,
        "my_prediction": predictions.prediction_of(seat=seat, shared=shared),
        "counts": None,
        "picture": None,
        "sent_at": f"{time.time():.3f}",
    }
    ctx.update(roundstate.round_context(room, seat=seat))  # timers and the answer round
    if live and shared is not None and shared.run_id:
        ctx.update(lab_picture(shared.run_id))
    return ctx


def lesson_url(question, tier: str) -> str:
    """The lesson page for a question (and tier); empty while the lessons have no such URL."""
    if question is None:
        return ""
    try:
        if tier in ("basics", "solid", "senior"):
            return reverse("lessons:tier", args=[question.slug, tier])
        return reverse("lessons:question", args=[question.slug])
    except NoReverseMatch:
        return ""


def presenter_extras(room: Room) -> dict:
    """What only the presenter page's controls need."""
    return {
        "questions": content.questions(),
        "experiments": content.room_experiments(),
        "lanes": content.lanes(),
        "metrics": list(content.METRICS.items()),
        "bounds": params_bounds(),
    }


def lab_picture(run_id: str, *, events: list[dict] | None = None) -> dict:
    """The lab's own picture of a run so far (from `events`, the lab reader's, or the stored
    ones), for a screen that connects mid-run."""
    try:
        from teachlab.lab.fragments import picture_from
        from teachlab.lab.models import Run
        from teachlab.lab.reading import run_events, run_summary
    except ImportError:
        return {}
    run = Run.objects.filter(pk=run_id).first()
    if run is None:
        return {}
    if events is None:
        events = run_events(run)
    return {
        "picture": picture_from(events),
        "counts": events[-1]["counts"] if events else run_summary(run),
        "seqs": [e["seq"] for e in events if e.get("seq")],
    }


def render_parts(template: str, parts: list[str], ctx: dict) -> str:
    return "".join(render_to_string(f"{template}#{part}", ctx) for part in parts)


def participant_html(room: Room, parts: list[str], *, seat: Seat | None = None, **kw) -> str:
    return render_parts(PARTICIPANT, parts, room_context(room, seat=seat, **kw))


def presenter_html(room: Room, parts: list[str], **kw) -> str:
    ctx = room_context(room, **kw)
    ctx.update(presenter_extras(room))
    ctx.update(roundstate.counts_context(room))  # connected, answered of those present
    return render_parts(PRESENTER, parts, ctx)


def run_event_frames(events: list[dict]) -> list[str]:
    """A batch of lab events as at most two frames: new receipt rows with the latest
    counters, then outcome cells. Table parts cannot share a frame: the HTML parser nests
    a <td> that follows a <tbody> instead of leaving it at the top for htmx to swap."""
    from teachlab.lab.fragments import event_view

    views = [event_view(e) for e in events]
    rows = [v for v in views if v["receipt"]]
    cells = [v for v in views if not v["receipt"] and v["outcome"]]
    counts = next((e["counts"] for e in reversed(events) if e.get("counts")), None)
    frames = []
    if rows or counts:
        frames.append(render_parts(PARTICIPANT, ["run_rows"], {"rows": rows, "counts": counts}))
    if cells:
        frames.append(render_parts(PARTICIPANT, ["run_outcomes"], {"cells": cells}))
    return frames


def error_html(message: str) -> str:
    return render_to_string(f"{PARTICIPANT}#error", {"error": message})

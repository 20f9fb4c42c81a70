"""HTML for the room's screens, from the partials of the participant and presenter pages.

A partial is rendered once per role for a broadcast (never once per client), and the same
partial draws the full page, an htmx swap and a push on reconnect, so they cannot disagree.
"""

from __future__ import annotations

import time

from django.template.loader import render_to_string
from django.urls import NoReverseMatch, reverse

from teachlab.lab.runs.params import params_bounds
from teachlab.workshop import content, plansteps, roundstate, scores, selectors
from teachlab.workshop.models import Prediction, Room, Seat, Vote

PARTICIPANT = "workshop/participant.html"
PRESENTER = "workshop/presenter.html"
SCORES = "workshop/scores.html"
MODERATION = "workshop/moderation.html"
CHOICE_LABELS = dict(Vote.CHOICES)


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
        "tally": selectors.tally(cr) if cr is not None else None,
        "my_vote": selectors.vote_of(seat=seat, claim_round=cr),
        "my_choice": "",
        "my_choice_label": "",
        "shared": shared,
        "metric_label": content.METRICS.get(shared.metric, shared.metric) if shared else "",
        "spread": selectors.spread(shared) if shared else None,
        "outcome": selectors.outcome(shared) if shared else None,
        "my_prediction": selectors.prediction_of(seat=seat, shared=shared),
        "counts": None,
        "picture": None,
        "sent_at": f"{time.time():.3f}",
        "moment": roundstate.moment(room),
    }
    ctx["moment_label"] = roundstate.MOMENT_LABELS[ctx["moment"]]
    if ctx["my_vote"] is not None:
        ctx["my_choice"] = ctx["my_vote"].choice
        ctx["my_choice_label"] = CHOICE_LABELS[ctx["my_vote"].choice]
    if ctx["outcome"] is not None:
        ranking = scores.ranking_page(shared, seat_id=seat.pk if seat else None)
        ctx.update(ranking=ranking, mine=ranking.mine)
    ctx.update(leaderboard_context(room, seat=seat))
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
        **plansteps.plan_context(room),
    }


def lab_picture(run_id: str, *, events: list[dict] | None = None) -> dict:
    """The lab's own picture of a run so far (from `events`, the lab reader's, or the stored
    ones), for a screen that connects mid-run."""
    try:
        from teachlab.lab.live.fragments import picture_from
        from teachlab.lab.models import Run
        from teachlab.lab.runs.reading import run_events, run_summary
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
        # a run that is over gives its amplification in the counters (lab/run.html#counters)
        "final": run.status != Run.Status.RUNNING,
        "seqs": [e["seq"] for e in events if e.get("seq")],
    }


def render_parts(template: str, parts: list[str], ctx: dict) -> str:
    return "".join(render_to_string(f"{template}#{part}", ctx) for part in parts)


def with_moment(parts: list[str], *extra: str) -> list[str]:
    """Every redraw of an open room's screen says which moment the room is on (the page's
    stylesheet shows that one and drops what is over), and the console's cockpit follows."""
    if not parts or "ended" in parts:
        return parts
    return [*parts, *(p for p in extra if p not in parts)]


def participant_html(room: Room, parts: list[str], *, seat: Seat | None = None, **kw) -> str:
    return render_parts(
        PARTICIPANT, with_moment(parts, "moment"), room_context(room, seat=seat, **kw)
    )


def presenter_context(room: Room, **kw) -> dict:
    ctx = room_context(room, **kw)
    ctx.update(presenter_extras(room))
    ctx.update(roundstate.counts_context(room))  # connected, answered of those present
    ctx.update(roundstate.people_context(room, ctx["present_ids"]))
    return ctx


def presenter_html(room: Room, parts: list[str], **kw) -> str:
    ctx = presenter_context(room, **kw)
    return render_parts(PRESENTER, with_moment(parts, "now", "quick"), ctx)


def run_event_frames(events: list[dict]) -> list[str]:
    """A batch of lab events as at most two frames: new receipt rows with the latest
    counters, then outcome cells. Table parts cannot share a frame: the HTML parser nests
    a <td> that follows a <tbody> instead of leaving it at the top for htmx to swap."""
    from teachlab.lab.live.fragments import event_view

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


def run_final_counters(summary: dict) -> str:
    """The run's counters once it is over, amplification included (lab/run.html#counters)."""
    return render_parts(PARTICIPANT, ["run_rows"], {"rows": [], "counts": summary, "final": True})


def leaderboard_context(room: Room, *, seat: Seat | None = None, board=None) -> dict:
    """The leaderboard's top rows and `seat`'s standing; `board` None while it is hidden."""
    if not room.leaderboard:
        return {"board": None, "board_total": 0, "my_standing": None}
    if board is None:
        board = scores.leaderboard(room)
    mine = next((r for r in board if seat is not None and r.seat_id == seat.pk), None)
    return {
        "board": board[: scores.LEADERBOARD_TOP],
        "board_total": len(board),
        "my_standing": mine,
    }


def scores_html(room: Room, parts: list[str], *, seat: Seat | None = None) -> str:
    return render_parts(
        SCORES, parts, {"room": room, "seat": seat, **leaderboard_context(room, seat=seat)}
    )


def ranking_html(room: Room, shared, *, seat: Seat | None, page: int | None) -> str:
    """One page of a run's ranking, `seat`'s row marked (the pager's answer)."""
    ranking = scores.ranking_page(shared, seat_id=seat.pk if seat else None, page=page)
    return render_parts(SCORES, ["ranking"], {"room": room, "seat": seat, "ranking": ranking})


def personal_html(*, room_id: int, kinds: list[str], seat_ids: set[int]) -> dict[int, str]:
    """Each seat's own view of what just changed for the whole room, by seat id.

    A broadcast is rendered once for everyone, so it cannot show "your vote was right" or
    "your place: 70th": this renders those small parts per seat, for the seats connected to
    one process (the hub asks). Parts that are equal for many seats are rendered once.
    """
    room = Room.objects.select_related("claim_round", "shared_run").get(pk=room_id)
    out = dict.fromkeys(seat_ids, "")
    cr, shared = room.claim_round, room.shared_run
    base = {"room": room, "personal": True}
    if "claim" in kinds and cr is not None and cr.revealed_at is not None:
        chosen = dict(
            Vote.objects.filter(round=cr, seat_id__in=seat_ids).values_list("seat_id", "choice")
        )
        drawn: dict[str, str] = {}
        for seat_id in seat_ids:
            choice = chosen.get(seat_id, "")
            if choice not in drawn:
                ctx = {**base, "claim_round": cr, "my_choice": choice,
                       "my_choice_label": CHOICE_LABELS.get(choice, "")}  # fmt: skip
                drawn[choice] = render_parts(SCORES, ["myclaim"], ctx)
            out[seat_id] += drawn[choice]
    if "prediction" in kinds and shared is not None:
        guessed = dict(
            Prediction.objects.filter(shared_run=shared, seat_id__in=seat_ids).values_list(
                "seat_id", "value"
            )
        )
        drawn_values: dict[int | None, str] = {}
        for seat_id in seat_ids:
            value = guessed.get(seat_id)
            if value not in drawn_values:
                guess = Prediction(value=value) if value is not None else None
                ctx = {**base, "shared": shared, "my_prediction": guess}
                drawn_values[value] = render_parts(PARTICIPANT, ["myprediction"], ctx)
            out[seat_id] += drawn_values[value]
    if "outcome" in kinds and shared is not None and shared.observed is not None:
        rows = scores.run_ranking(shared)
        for seat_id in seat_ids:
            # The page shown is the broadcast's first: "show my row" fetches the seat's own.
            ranking = scores.ranking_from(rows, shared, seat_id=seat_id, page=1)
            ctx = {**base, "ranking": ranking, "mine": ranking.mine}
            out[seat_id] += render_parts(SCORES, ["myresult"], ctx)
    if room.leaderboard and kinds:
        board = scores.leaderboard(room)
        by_seat_board = {r.seat_id: r for r in board}
        for seat_id in seat_ids:
            ctx = {**base, "board": board, "board_total": len(board),
                   "my_standing": by_seat_board.get(seat_id)}  # fmt: skip
            out[seat_id] += render_parts(SCORES, ["myscore"], ctx)
    return out


def moderation_html(room: Room, parts: list[str], *, query: str = "") -> str:
    """The presenter's moderation panel: lock, leaderboard switch, seats found by `query`."""
    ctx = {"room": room, "query": query, "found": selectors.seats_find(room=room, query=query)}
    return render_parts(MODERATION, parts, ctx)


def error_html(message: str) -> str:
    return render_to_string(f"{PARTICIPANT}#error", {"error": message})

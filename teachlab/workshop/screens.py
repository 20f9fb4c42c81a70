"""HTML for the projector view (templates/workshop/projector.html): what the room sees.

The projector gets its own rendering of each broadcast, like the participants and the
presenter console: the same question, claim and run, in large type, without controls, and
without the answer to a claim until it is revealed.
"""

from __future__ import annotations

from teachlab.workshop import fragments, roundstate, scores
from teachlab.workshop.models import Room

PROJECTOR = "workshop/projector.html"


PODIUM = 3
JOINED_SHOWN = 60  # the lobby's names: the newest, so a big class still fits one screen


def screen_context(room: Room, *, live: bool = False) -> dict:
    ctx = fragments.room_context(room, live=live)
    ctx.update(roundstate.counts_context(room))
    if ctx["moment"] in ("podium", "ended"):
        ctx["podium"] = scores.leaderboard(room)[:PODIUM]
    if ctx["moment"] == "leaderboard" and ctx["board"] is None:
        ctx["board"] = scores.leaderboard(room)[: scores.LEADERBOARD_TOP]
    if ctx["moment"] == "lobby":
        ctx.update(joined_context(room))
    return ctx


def joined_context(room: Room) -> dict:
    seated = room.seats.seated().order_by("-joined_at", "-pk").values_list("nickname", flat=True)
    names = list(seated[:JOINED_SHOWN])
    return {"joined": names[::-1], "joined_total": room.seats.seated().count()}


def joined_html(room: Room) -> str:
    """The lobby's names, redrawn as people join (hub.RoomHub.refresh_later)."""
    return fragments.render_parts(PROJECTOR, ["joined"], {"room": room, **joined_context(room)})


def joined_html_for(*, room_id: int) -> str:
    room = Room.objects.filter(pk=room_id).first()
    return joined_html(room) if room is not None and room.is_open else ""


def screen_html(room: Room, parts: list[str], **kw) -> str:
    ctx = screen_context(room, **kw)
    return fragments.render_parts(PROJECTOR, fragments.with_moment(parts, "moment", "board"), ctx)


def counts_html(room: Room) -> dict[str, str]:
    """The live counts, for the console and the projector: only the parts on screen now."""
    ctx = screen_context(room)
    parts = ["presence"]
    cr = room.claim_round
    if cr is not None and cr.revealed_at is None:
        parts.append("answered")
    screen_parts = list(parts)
    if room.answer_round is not None:
        parts.append("answercount")
        # The projector counts answers only while they come in; once the round ends it shows
        # the answers themselves, and a count with no place to go was htmx:oobErrorNoTarget.
        if roundstate.answers_accepting(room.answer_round):
            screen_parts.append("answercount")
    # The console's per-person list: connected, and answered what is open now.
    ctx.update(roundstate.people_context(room, ctx["present_ids"]))
    presenter = fragments.render_parts(fragments.PRESENTER, [*parts, "people"], ctx)
    shared = room.shared_run
    if shared is not None and shared.fired_at is None:
        screen_parts.append("spread")
    return {"presenter": presenter, "screen": fragments.render_parts(PROJECTOR, screen_parts, ctx)}

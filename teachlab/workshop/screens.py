"""HTML for the projector view (templates/workshop/projector.html): what the room sees.

The projector gets its own rendering of each broadcast, like the participants and the
presenter console: the same question, claim and run, in large type, without controls, and
without the answer to a claim until it is revealed.
"""

from __future__ import annotations

from teachlab.workshop import fragments, roundstate
from teachlab.workshop.models import Room

PROJECTOR = "workshop/projector.html"


def screen_context(room: Room, *, live: bool = False) -> dict:
    ctx = fragments.room_context(room, live=live)
    ctx.update(roundstate.counts_context(room))
    return ctx


def screen_html(room: Room, parts: list[str], **kw) -> str:
    return fragments.render_parts(PROJECTOR, parts, screen_context(room, **kw))


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
    presenter = fragments.render_parts(fragments.PRESENTER, parts, ctx)
    shared = room.shared_run
    if shared is not None and shared.fired_at is None:
        screen_parts.append("spread")
    return {"presenter": presenter, "screen": fragments.render_parts(PROJECTOR, screen_parts, ctx)}

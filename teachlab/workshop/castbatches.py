"""A room's votes and guesses from its participant sockets, stored a batch at a time
(batching.py), each sender answered with its own confirmation or refusal."""

from __future__ import annotations

from teachlab.workshop import fragments, predictions, votes
from teachlab.workshop.batching import RoomBatcher
from teachlab.workshop.errors import WorkshopError


def _own_answers(results: list, key, draw) -> list:
    """Each sender's own confirmation, drawn once per distinct `key(result)` (a small context,
    not the whole room's), or its refusal as the WorkshopError itself."""
    drawn: dict = {}
    out: list = []
    for result in results:
        if isinstance(result, WorkshopError):
            out.append(result)
            continue
        k = key(result)
        if k not in drawn:
            drawn[k] = draw(result)
        out.append(drawn[k])
    return out


def _votes_html(room_id: int, ballots: list[tuple[int, int, str]]) -> list:
    return _own_answers(
        votes.votes_cast(room_id=room_id, ballots=ballots),
        lambda vote: vote.choice,
        lambda vote: fragments.render_parts(
            fragments.PARTICIPANT, ["myvote", "error"], {"my_vote": vote}
        ),
    )


def _predictions_html(room_id: int, guesses: list[tuple]) -> list:
    return _own_answers(
        predictions.predictions_make(room_id=room_id, guesses=guesses),
        lambda guess: guess.value,
        lambda guess: fragments.render_parts(
            fragments.PARTICIPANT,
            ["myprediction", "error"],
            {"my_prediction": guess, "shared": guess.shared_run},
        ),
    )


VOTES = RoomBatcher(_votes_html)
PREDICTIONS = RoomBatcher(_predictions_html)

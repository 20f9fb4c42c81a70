"""Generated nicknames ("Brave Otter") a participant can take instead of typing one: quick
on a phone, and nothing to filter. Words picked by hand, so every pair is fit for a projector."""

from __future__ import annotations

import secrets

from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import Room
from teachlab.workshop.rooms import nickname_check

ADJECTIVES = (
    "Brave", "Calm", "Clever", "Curious", "Daring", "Eager", "Gentle", "Happy", "Jolly",
    "Kind", "Lively", "Lucky", "Mighty", "Nimble", "Patient", "Plucky", "Quick", "Quiet",
    "Sharp", "Steady", "Sunny", "Swift", "Tidy", "Witty", "Bold", "Bright", "Cheerful",
    "Merry", "Proud", "Wise",
)  # fmt: skip
ANIMALS = (
    "Otter", "Badger", "Falcon", "Heron", "Lynx", "Panda", "Koala", "Puffin", "Beaver",
    "Dolphin", "Gecko", "Hedgehog", "Ibis", "Jaguar", "Kestrel", "Lemur", "Marten", "Newt",
    "Owl", "Pelican", "Quokka", "Raven", "Salmon", "Tapir", "Walrus", "Wombat", "Yak",
    "Zebra", "Robin", "Fox",
)  # fmt: skip
TRIES = 20  # 900 pairs: a room of 300 still finds three free ones well within this


def nickname_suggestions(*, room: Room | None = None, count: int = 3) -> list[str]:
    """`count` different generated names; with a room, only names nobody there has taken."""
    found: list[str] = []
    for _ in range(TRIES * count):
        name = f"{secrets.choice(ADJECTIVES)} {secrets.choice(ANIMALS)}"
        if name in found:
            continue
        if room is not None:
            try:
                nickname_check(room=room, nickname=name)
            except WorkshopError:
                continue
        found.append(name)
        if len(found) == count:
            break
    return found

"""The words for each kind of progress record, singular and plural, shared by the reset page
and the import report: "1 self-rating", never "1 self-ratings"."""

from __future__ import annotations

NOUNS = {
    "tiers revealed": ("tier revealed", "tiers revealed"),
    "self-ratings": ("self-rating", "self-ratings"),
    "quiz attempts": ("quiz attempt", "quiz attempts"),
    "quiz answers": ("quiz answer", "quiz answers"),
    "review items": ("review item", "review items"),
    "lab run summaries": ("lab run summary", "lab run summaries"),
    "experiment attempt summaries": ("experiment attempt summary", "experiment attempt summaries"),
    "imported lab and experiment summaries": (
        "imported lab or experiment summary",
        "imported lab and experiment summaries",
    ),
}


def counted(kind: str, n: int) -> str:
    return f"{n} {NOUNS[kind][n != 1]}"

"""Which answer tiers a learner has revealed: written when a tier opens, read by the index."""

from lessons.models import Learner, TierReveal
from lessons.schema import TIERS


def reveal_record(*, learner: Learner, slug: str, tier: str) -> list[str]:
    """Record `tier` and every tier before it as revealed (a permalink to senior shows all
    three); returns the tiers recorded."""
    upto = list(TIERS[: TIERS.index(tier) + 1])
    for name in upto:
        TierReveal.objects.get_or_create(learner=learner, question_slug=slug, tier=name)
    return upto


def revealed_tiers(*, learner: Learner) -> dict[str, set[str]]:
    """slug -> tiers this learner has revealed."""
    revealed: dict[str, set[str]] = {}
    for slug, tier in TierReveal.objects.for_learner(learner).values_list("question_slug", "tier"):
        revealed.setdefault(slug, set()).add(tier)
    return revealed

"""The rules a lesson file must follow, in one place so the validator, the loader and the
README table cannot drift apart (lessons/content/README.md describes the same rules)."""

TIERS = ("basics", "solid", "senior")
LEVELS = ("junior", "middle", "senior", "principal")
IMPORTANCE = ("low", "medium", "high", "critical")
FREQUENCY = ("rare", "sometimes", "often", "very-often")
LANGUAGES = ("python", "bash", "console", "yaml", "ini", "json", "sql", "text", "redis")

# Word limits per tier: (at least, at most); None means no bound on that side.
TIER_WORDS: dict[str, tuple[int | None, int | None]] = {
    "basics": (None, 60),
    "solid": (None, 130),
    "senior": (500, None),
}
# Seconds of spoken answer each tier stands for; the "Answer out loud" timer uses them.
TIER_SECONDS = {"basics": 20, "solid": 40, "senior": 120}

KEY_POINTS = (4, 6)
MIN_CODE_SAMPLES = 1
MIN_FOLLOWUPS = 2
MIN_CLAIMS_COST = 5
MIN_CLAIMS_HOLD = 3

SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"

# Top-level fields: name -> required?
FIELDS = {
    "slug": True,
    "order": True,
    "title": True,
    "prompt": True,
    "level": True,
    "importance": True,
    "frequency": True,
    "key_points": True,
    "tiers": True,
    "code_samples": True,
    "go_deeper": True,
    "followups": True,
    "claims_cost": True,
    "claims_hold": True,
    "experiments": False,
}
CODE_SAMPLE_FIELDS = {"title": True, "language": True, "tier": True, "code": True, "caption": False}
FOLLOWUP_FIELDS = {"question": True, "answer": True}
CLAIM_COST_FIELDS = {"id": True, "claim": True, "why_wrong": True, "truth": True, "tier": True}
CLAIM_HOLD_FIELDS = {"id": True, "claim": True, "why": True, "tier": True}
GO_DEEPER_FIELDS = {level: True for level in LEVELS}
TIER_FIELDS = {tier: True for tier in TIERS}

"""The rules a lesson file must follow, in one place so the validator, the loader and the
README table cannot drift apart (lessons/content/README.md describes the same rules)."""

from typing import ClassVar

from pydantic import StrictInt, field_validator

from lessons.evidence import PRODUCTS, Backed
from lessons.evidence_context import experiments_dir_shown
from lessons.rendering import count_words, has_table
from lessons.yamlschema import Slug, Text, YamlModel, choice, count, refusal

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


# --- the models the loader validates a file with (lessons/yamlschema.py reports problems) ---

Tier = choice(TIERS, "tier")


class CodeSampleModel(YamlModel):
    title: Text
    language: choice(LANGUAGES, "code language")
    tier: Tier
    code: Text
    caption: Text | None = None


class FollowupModel(YamlModel):
    question: Text
    answer: Text


class KeyPointModel(Backed):
    text_fields: ClassVar[tuple[str, ...]] = ("point",)
    point: Text


class CostClaimModel(Backed):
    text_fields: ClassVar[tuple[str, ...]] = ("claim", "why_wrong", "truth")
    id: Slug
    claim: Text
    why_wrong: Text
    truth: Text
    tier: Tier


class HoldClaimModel(Backed):
    text_fields: ClassVar[tuple[str, ...]] = ("claim", "why")
    id: Slug
    claim: Text
    why: Text
    tier: Tier


class TiersModel(YamlModel):
    yaml_noun: ClassVar[str] = "tier"
    basics: Text
    solid: Text
    senior: Text

    @field_validator("basics", "solid", "senior")
    @classmethod
    def _words(cls, text: str, info) -> str:
        words = count_words(text)
        low, high = TIER_WORDS[info.field_name]
        if high is not None and words > high:
            raise refusal("words", f"{words} words, over the limit of {high}")
        if low is not None and words < low:
            raise refusal("words", f"{words} words, under the minimum of {low}")
        if info.field_name == "senior" and not has_table(text):
            raise refusal("table", "no Markdown table (the senior tier needs at least one)")
        return text


class GoDeeperModel(YamlModel):
    yaml_noun: ClassVar[str] = "level"
    junior: Text
    middle: Text
    senior: Text
    principal: Text


class LessonModel(YamlModel):
    yaml_name: ClassVar[str] = "lesson"
    slug: Slug
    order: StrictInt
    title: Text
    prompt: Text
    level: choice(LEVELS, "level")
    importance: choice(IMPORTANCE, "importance")
    frequency: choice(FREQUENCY, "frequency")
    checked_against: dict[str, Text]
    key_points: count(list[KeyPointModel], *KEY_POINTS)
    tiers: TiersModel
    code_samples: count(list[CodeSampleModel], MIN_CODE_SAMPLES)
    go_deeper: GoDeeperModel
    followups: count(list[FollowupModel], MIN_FOLLOWUPS)
    claims_cost: count(list[CostClaimModel], MIN_CLAIMS_COST)
    claims_hold: count(list[HoldClaimModel], MIN_CLAIMS_HOLD)
    experiments: list[Slug] | None = None
    # Position on the home page's "start here" path (lessons/course.py); the validator checks
    # across files that no step is used twice and that the path never goes down in level.
    course_step: StrictInt | None = None

    @field_validator("course_step")
    @classmethod
    def _course_step_positive(cls, step):
        if step is not None and step < 1:
            raise refusal("course", f"expected a step of 1 or more, found {step}")
        return step

    @field_validator("checked_against", mode="before")
    @classmethod
    def _products(cls, value):
        if isinstance(value, dict):
            unknown = [k for k in value if k not in PRODUCTS]
            if unknown:
                expected = ", ".join(PRODUCTS)
                raise refusal(
                    "product", f"unknown product {unknown[0]!r} (expected one of: {expected})"
                )
            if not value:
                raise refusal("empty", "name the versions this lesson was checked against")
        return value

    @field_validator("experiments")
    @classmethod
    def _experiments_exist(cls, slugs, info):
        known = (info.context or {}).get("experiments")
        for slug in slugs or []:
            if known is not None and slug not in known:
                raise refusal(
                    "experiment", f"no experiment with slug {slug!r} in {experiments_dir_shown()}"
                )
        return slugs

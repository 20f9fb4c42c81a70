"""The rules an experiment file follows, as pydantic models (schema_words.py gives them the
experiments' wording), in one place for the validator, the loader and the README
(lessons/experiments/README.md describes the same rules). Checks that refer to other runs,
lanes, lessons or metric tables come after the models, in references.py."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict

from teachlab.lab.experiments.needs import NEEDS_PACKAGES
from teachlab.lab.experiments.schema_conditions import CheckModel, ConditionModel, version_range
from teachlab.lab.experiments.schema_steps import steps_found
from teachlab.lab.experiments.schema_words import (
    NAME_PATTERN,
    SLUG_PATTERN,
    ExperimentPart,
    Found,
    listing,
    listing_problem,
    named,
    one_of,
    part_found,
    rule,
    text,
)
from teachlab.lab.runs.errors import LabInputError
from teachlab.lab.runs.params import PARAMS as RUN_PARAMS
from teachlab.lab.runs.params import param_parse

TIERS = ("basics", "solid", "senior")
PREDICTION_KINDS = ("number", "choice")

# Run parameters, their types and ranges: the lab's one schema (teachlab/lab/runs/params.py).
# A fixed ETA would be in the past by the next attempt, so experiments give countdowns.
PARAMS = {name: p for name, p in RUN_PARAMS.items() if p.kind != "moment"}


ChoiceId = named(NAME_PATTERN, "a choice `id` is lowercase letters, digits and hyphens")


class ChoiceModel(ExperimentPart):
    yaml_what: ClassVar[str] = "a choice"
    id: ChoiceId
    label: text("a choice `label`")
    when: ConditionModel


Choices = listing(ChoiceModel, "`choices`", at_least=2)


class ObserveModel(ExperimentPart):
    yaml_what: ClassVar[str] = "`observe`"
    run: Any = None
    what: text("`what`")


class TimingModel(ExperimentPart):
    """A second question, about when: {prompt, choices}."""

    yaml_what: ClassVar[str] = "the timing prediction"
    prompt: text("the timing `prompt`")
    choices: Choices


class PredictionModel(ExperimentPart):
    yaml_what: ClassVar[str] = "`prediction`"
    prompt: text("the prediction `prompt`")
    kind: one_of(PREDICTION_KINDS, f"`kind` must be one of {', '.join(PREDICTION_KINDS)}")
    observe: Any = None  # number predictions; checked with the kind below
    unit: Any = None
    choices: Any = None  # choice predictions
    timing: TimingModel | None = None

    @classmethod
    def yaml_checks(cls, value: dict) -> Found:
        kind = value.get("kind")
        if kind not in PREDICTION_KINDS:
            return []
        if kind == "choice":
            found = part_found(Choices, value.get("choices"), ("choices",))
            if "observe" in value:
                message = "a choice prediction is matched by each choice's `when`, not `observe`"
                found.append((("observe",), message))
            return found
        if "observe" not in value:
            message = (
                "a number prediction needs `observe`: {run, what} naming the run metric to compare"
            )
            found = [((), message)]
        else:
            found = part_found(ObserveModel, value["observe"], ("observe",))
        if "choices" in value:
            found.append((("choices",), "a number prediction has no `choices`"))
        return found


class ParamsModel(ExperimentPart):
    """Run parameters: their names, types and ranges are the lab's (teachlab/lab/runs/params.py)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    @classmethod
    def yaml_not_mapping(cls) -> str:
        return "`params` must be a mapping of run parameters"

    @classmethod
    def yaml_checks(cls, value: dict) -> Found:
        found: Found = []
        for key, given in value.items():
            if key not in PARAMS:
                found.append(
                    ((key,), f"unknown run parameter `{key}` (known: {', '.join(PARAMS)})")
                )
                continue
            types = PARAMS[key].types
            if isinstance(given, bool) != (bool in types) or not isinstance(given, types):
                shown = " or ".join(t.__name__ for t in types)
                found.append(((key,), f"`{key}` must be {shown}, not {given!r}"))
                continue
            try:
                param_parse(key, given)
            except LabInputError as exc:
                found.append(((key,), str(exc)))
        return found


RunName = named(NAME_PATTERN, "a run `name` is lowercase letters, digits and hyphens")
Lane = rule(lambda value: "" if isinstance(value, str) else "`lane` must name a lab lane")
Flag = rule(lambda value: "" if isinstance(value, bool) else "`feeder` is true or false")


class RunModel(ExperimentPart):
    """`after`: start when that (earlier) run's steps are done, for runs that would disturb
    each other on one lane (a crash, then a warm shutdown); without it runs go side by side."""

    yaml_what: ClassVar[str] = "a run"
    name: RunName
    lane: Lane
    params: ParamsModel
    steps: listing(Any, "`steps`")
    feeder: Flag = None
    after: Any = None

    @classmethod
    def yaml_checks(cls, value: dict) -> Found:
        steps = value.get("steps")
        if listing_problem(steps, "`steps`"):
            return []
        return [(("steps", *loc), message) for loc, message in steps_found(steps)]


LessonSlug = text("`lesson`")
ClaimIds = rule(
    lambda value: (
        ""
        if isinstance(value, list) and all(isinstance(x, str) for x in value)
        else "`claims` must be a list of claim ids ([] when it shows the lesson as a whole)"
    )
)


class BackModel(ExperimentPart):
    yaml_what: ClassVar[str] = "a `backs` entry"
    lesson: LessonSlug
    claims: ClaimIds


class LinkModel(ExperimentPart):
    yaml_what: ClassVar[str] = "a link"
    lesson: LessonSlug
    tier: one_of(TIERS, f"`tier` must be one of {', '.join(TIERS)}")
    text: Any = None


class NeedsModel(ExperimentPart):
    """The releases the checks depend on, as version ranges of the workers' packages, and why.
    `lab matrix` records a combination whose lock file pins a release outside a range as
    `skipped`, with the why, and starts no workers for it. Use it where a setting the
    experiment relies on does not exist in older releases (not to hide a behaviour that differs)."""

    yaml_what: ClassVar[str] = "`needs`"
    celery: version_range("`needs.celery`") = None
    kombu: version_range("`needs.kombu`") = None
    why: text("`needs.why`")

    @classmethod
    def yaml_checks(cls, value: dict) -> Found:
        if not any(name in value for name in NEEDS_PACKAGES):
            return [((), f"`needs` names none of {', '.join(NEEDS_PACKAGES)}")]
        return []


Slug = named(SLUG_PATTERN, "`slug` must be lowercase letters, digits and hyphens")
Order = rule(
    lambda value: (
        ""
        if isinstance(value, int) and not isinstance(value, bool)
        else "`order` must be a whole number"
    )
)


class ExperimentModel(ExperimentPart):
    yaml_what: ClassVar[str] = "an experiment"
    slug: Slug
    order: Order
    title: text("`title`")
    question: text("`question`")
    backs: listing(BackModel, "`backs`")
    prediction: PredictionModel
    runs: listing(RunModel, "`runs`")
    checks: listing(CheckModel, "`checks`")
    explanation: text("`explanation`")
    links: listing(LinkModel, "`links`", at_least=0) = None
    needs: NeedsModel | None = None
    # why its checks mean something when the lane's workers exit at start: `lab matrix` then
    # runs it anyway instead of recording "workers fail"
    workers_may_exit: text("`workers_may_exit`") = None

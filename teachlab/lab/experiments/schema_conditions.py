"""A condition in an experiment file: a metric of a run (or of each of its tasks) and one
bound, as a check, a choice's `when` or an `until` step uses it. Which metrics and runs exist
is checked afterwards (references.py)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import field_validator

from teachlab.lab.experiments.checks import BOUNDS, PER
from teachlab.lab.experiments.needs import range_problem
from teachlab.lab.experiments.schema_words import (
    NAME_PATTERN,
    ExperimentPart,
    Found,
    named,
    number,
    number_problem,
    one_of,
    rule,
    said,
    text,
)

Bound = Any  # a number, [low, high] for `between`, or another run's metric (BoundRefModel)


class BoundRefModel(ExperimentPart):
    """A bound read off another run: {run, what, times, plus}."""

    yaml_what: ClassVar[str] = "a bound that refers to a run"
    run: Any
    what: text("`what`")
    times: Any = None
    plus: Any = None


class ConditionModel(ExperimentPart):
    """A metric of a run (or of each of its tasks) and one bound it must meet."""

    yaml_what: ClassVar[str] = "a choice's `when`"
    run: Any = None
    what: text("`what`")
    per: one_of(PER, f"`per` must be one of {', '.join(PER)}, not {{value!r}}") = None
    at_least: Bound = None
    at_most: Bound = None
    equals: Bound = None
    more_than: Bound = None
    less_than: Bound = None
    between: Bound = None

    @field_validator(*BOUNDS, mode="before")
    @classmethod
    def _bound(cls, bound: Any, info) -> Any:
        if isinstance(bound, dict):
            return BoundRefModel.model_validate(bound).model_dump()
        if info.field_name == "between":
            pair = isinstance(bound, list) and len(bound) == 2
            if not (
                pair
                and all(isinstance(b, int | float) and not isinstance(b, bool) for b in bound)
                and bound[0] <= bound[1]
            ):
                raise said("`between` takes [low, high], two numbers with low <= high")
            return bound
        problem = number_problem(bound, f"`{info.field_name}`")
        if problem:
            raise said(problem)
        return bound

    @classmethod
    def yaml_checks(cls, value: dict) -> Found:
        if sum(1 for b in BOUNDS if b in value) != 1:
            return [((), f"{cls.yaml_what} needs exactly one bound of {', '.join(BOUNDS)}")]
        return []


class UntilModel(ConditionModel):
    yaml_what: ClassVar[str] = "`until`"
    within: number("`within` seconds", minimum=1)


def version_range(label: str) -> Any:
    """A version range like ">=5.7" (packaging's specifiers), named `label` when it is not."""
    return rule(lambda value: f"{label} {range_problem(value)}" if range_problem(value) else "")


CheckId = named(
    NAME_PATTERN,
    "a check's `id` is lowercase letters, digits and dashes, like `body-ran-once`",
)


class CheckModel(ConditionModel):
    """`id`: a name unique in the file, for lessons to cite as evidence (`checks: [id]`)."""

    yaml_what: ClassVar[str] = "a check"
    id: CheckId = None
    # `on_redis` / `on_kombu` / `on_celery`: a version range of the run's Redis server / the
    # workers' kombu / the workers' Celery (as they report them) the check applies to; elsewhere it
    # is left out of the verdict, so an experiment whose outcome changed between releases states
    # each outcome on its own releases.
    on_redis: version_range("`on_redis`") = None
    on_kombu: version_range("`on_kombu`") = None
    on_celery: version_range("`on_celery`") = None
    says: text("a check's `says`")

"""The experiment files' pydantic models, in the experiments' own words.

lessons/yamlschema.py reads the file (lines, duplicate keys) and gives the model base; its
messages read "where: missing field 'x'", while an experiment author has always read
"a run is missing `lane`" and the tests pin those words. So every model here is an
`ExperimentPart`: it says what it is (`yaml_what`), turns pydantic's missing / unknown /
not-a-mapping errors into those words, and may add checks across its fields that run even when
one field is wrong (`yaml_checks`), as the hand-written walker before it did.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, TypeAdapter, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from lessons.yamlschema import Loc, YamlModel

Found = list[tuple[Loc, str]]  # (where below the value, message)
SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
NAME_PATTERN = r"^[a-z][a-z0-9-]*$"  # names of runs, choices and checks


def said(message: str) -> PydanticCustomError:
    """An error whose message is shown as it is."""
    return PydanticCustomError("experiment", "{message}", {"message": message})


def errors_found(exc: ValidationError) -> Found:
    """(loc, message) of each error, in our words when a validator gave them."""
    found = []
    for error in exc.errors(include_url=False):
        ctx = error.get("ctx") or {}
        found.append((tuple(error["loc"]), str(ctx.get("message", error["msg"]))))
    return found


def part_found(kind: Any, value: Any, at: Loc = ()) -> Found:
    """Validate `value` as `kind` (a model or an annotated type) where it sits at `at`: for
    parts whose rules depend on a sibling (a prediction's choices, a run's steps)."""
    try:
        TypeAdapter(kind).validate_python(value)
    except ValidationError as exc:
        return [((*at, *loc), message) for loc, message in errors_found(exc)]
    return []


def _raise(found: Found, value: Any) -> None:
    if found:
        details = [{"type": said(m), "loc": loc, "input": value} for loc, m in found]
        raise ValidationError.from_exception_data("experiment", details)


class ExperimentPart(YamlModel):
    yaml_what: ClassVar[str] = "a part"

    @classmethod
    def yaml_keys(cls) -> list[str]:
        return [info.alias or name for name, info in cls.model_fields.items()]

    @classmethod
    def yaml_not_mapping(cls) -> str:
        return f"{cls.yaml_what} must be a mapping with {', '.join(cls.yaml_keys())}"

    @classmethod
    def yaml_unknown(cls, key: str) -> str:
        allowed = ", ".join(cls.yaml_keys())
        return f"{cls.yaml_what} has an unknown field `{key}` (allowed: {allowed})"

    @classmethod
    def yaml_checks(cls, value: dict) -> Found:
        """Checks across fields, on the raw mapping; they run even when a field is wrong."""
        return []

    @model_validator(mode="wrap")
    @classmethod
    def _in_our_words(cls, value: Any, handler: Callable) -> Any:
        if not isinstance(value, dict):
            raise said(cls.yaml_not_mapping())
        found: Found = []
        model = None
        try:
            model = handler(value)
        except ValidationError as exc:
            for error in exc.errors(include_url=False):
                loc, ctx = tuple(error["loc"]), error.get("ctx") or {}
                if error["type"] == "missing" and len(loc) == 1:
                    found.append(((), f"{cls.yaml_what} is missing `{loc[0]}`"))
                elif error["type"] == "extra_forbidden" and len(loc) == 1:
                    found.append((loc, cls.yaml_unknown(str(loc[0]))))
                else:
                    found.append((loc, str(ctx.get("message", error["msg"]))))
        _raise(found + cls.yaml_checks(value), value)
        return model


# --- value rules, each with the message an author reads ------------------------------------


def _refuser(check: Callable[[Any], str]) -> Callable[[Any], Any]:
    """A validator that refuses a value with `check`'s message ("" when it is fine)."""

    def validate(value: Any) -> Any:
        problem = check(value)
        if problem:
            raise said(problem)
        return value

    return validate


def rule(check: Callable[[Any], str]) -> Any:
    """A field of any type that `check` refuses with a message ("" when it is fine)."""
    return Annotated[Any, BeforeValidator(_refuser(check))]


def named_problem(value: Any, pattern: str, message: str) -> str:
    return "" if isinstance(value, str) and re.match(pattern, value) else message


def text_problem(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        return f"{what} must be non-empty text"
    return ""


def number_problem(value: Any, what: str, minimum: float | None = None) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{what} must be a number, not {value!r}"
    if minimum is not None and value < minimum:
        return f"{what} must be at least {minimum}, not {value}"
    return ""


def listing_problem(value: Any, what: str, at_least: int = 1) -> str:
    if not isinstance(value, list) or len(value) < at_least:
        return f"{what} must be a list of at least {at_least}"
    return ""


def named(pattern: str, message: str) -> Any:
    """A name that matches `pattern` (a slug, a run's or a check's name)."""
    return rule(lambda value: named_problem(value, pattern, message))


def text(what: str) -> Any:
    return rule(lambda value: text_problem(value, what))


def number(what: str, minimum: float | None = None) -> Any:
    return rule(lambda value: number_problem(value, what, minimum))


def one_of(values: tuple, message: str) -> Any:
    """A value from `values`; `message` may name the value as {value!r}."""
    return rule(lambda value: "" if value in values else message.format(value=value))


def listing(item: Any, what: str, at_least: int = 1) -> Any:
    """A list of `item`s, at least `at_least` of them."""
    check = _refuser(lambda value: listing_problem(value, what, at_least))
    return Annotated[list[item], BeforeValidator(check)]

"""YAML files checked by pydantic models, every problem reported as `path:line: message` on the
line an author has to fix. Lessons (lessons/schema.py) and experiments use this one module, so
both kinds of file get the same wording for the same mistake.

How to use it (the whole interface):

    from lessons.yamlschema import (
        YamlModel, Problem, Document, document_load, document_validate,
        Text, Slug, choice, count, refusal, located_error,
    )

    class Step(YamlModel):
        yaml_noun = "field"            # "unknown field 'x'", "missing field 'x'"
        name: Slug
        wait: float | None = None

    class Experiment(YamlModel):
        yaml_name = "experiment"       # what the root is called in messages ("experiment: ...")
        slug: Slug
        title: Text
        kind: choice(("number", "choice"), "prediction kind")
        steps: count(list[Step], 1, None)  # "steps: expected at least 1 items, found 0"

    doc, problems = document_load(path, shown="lessons/experiments/x.yaml")
    if doc is not None:                # None: unreadable, not UTF-8, YAML syntax error, empty
        model, problems = document_validate(doc, Experiment, context={"lessons": ...})
    # model is None when there is any problem; problems are sorted by line.
    # Checks across fields after validation: doc.problem(("steps", 2, "name"), "message")
    # -> Problem at the line of that key (or the nearest enclosing one).

- `Document.data` is plain dicts/lists/scalars; `Document.line(loc)` the 1-based line of a key
  (for a mapping value) or of the `-` (for a list item); the root is line 1.
- A duplicate key is a problem ("<where>: duplicate field 'x' (first on line N)"); the first
  value is kept.
- Validators may read `info.context` (what `document_validate` got) and raise
  `refusal("kind", "message")`: the message is shown as it is, prefixed with where it
  happened (`claims_cost[0].tier: ...`). `located_error(("sub", 0), "message")` raised from
  a model validator points at a field below the model instead of the model itself.
- Messages for pydantic's own errors: missing/unknown key, "expected text, found a list",
  "expected a whole number, found 'x'", "expected a list, found a mapping", "expected a mapping
  of fields"; anything else gets pydantic's message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Union, get_args, get_origin

import yaml
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from lessons.yamlread import compose

Loc = tuple[str | int, ...]
SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
_SLUG = re.compile(SLUG_PATTERN)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file, printed as `path:line: message`."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class YamlModel(BaseModel):
    """A mapping in a YAML file: unknown keys are refused, messages name the keys by `yaml_noun`."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    yaml_noun: ClassVar[str] = "field"
    yaml_name: ClassVar[str] = "file"  # used only for the root model


# --- loading --------------------------------------------------------------------------------


@dataclass
class Document:
    """A YAML file as plain data, with the line of every key and list item."""

    shown: str
    data: Any
    lines: dict[Loc, int] = field(default_factory=dict)
    duplicates: list[tuple[Loc, str, int, int]] = field(default_factory=list)

    def line(self, loc: Iterable[str | int]) -> int:
        """Line of `loc`, or of the nearest enclosing key or item that has one."""
        loc = tuple(loc)
        while loc and loc not in self.lines:
            loc = loc[:-1]
        return self.lines.get(loc, 1)

    def problem(self, loc: Iterable[str | int], message: str) -> Problem:
        return Problem(self.shown, self.line(loc), message)


_scalars = SafeConstructor()


def _node_line(node: Node) -> int:
    return node.start_mark.line + 1


def _plain(node: Node, loc: Loc, doc: Document) -> Any:
    if isinstance(node, MappingNode):
        out: dict[Any, Any] = {}
        first: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = _plain(key_node, (), doc) if isinstance(key_node, ScalarNode) else repr(key_node)
            if isinstance(key, list | dict):
                key = repr(key)
            line = _node_line(key_node)
            if key in first:
                doc.duplicates.append((loc, str(key), line, first[key]))
                continue
            first[key] = line
            doc.lines[(*loc, key)] = line
            out[key] = _plain(value_node, (*loc, key), doc)
        return out
    if isinstance(node, SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            doc.lines[(*loc, i)] = _node_line(item)
            items.append(_plain(item, (*loc, i), doc))
        return items
    return _scalars.construct_object(node, deep=True)


def document_load(path: Path, *, shown: str | None = None) -> tuple[Document | None, list[Problem]]:
    """The file as a Document, or the reason it cannot be read (with its line)."""
    shown = shown or str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        return None, [Problem(shown, 1, f"cannot read the file: {exc}")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        message = f"not valid UTF-8 (byte 0x{raw[exc.start]:02x}); save the file as UTF-8"
        return None, [Problem(shown, line, message)]
    return document_parse(text, shown=shown)


def document_parse(text: str, *, shown: str) -> tuple[Document | None, list[Problem]]:
    """Like document_load, for text already in hand."""
    try:
        root = compose(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        detail = " ".join(p for p in (exc.context, exc.problem) if p)
        return None, [Problem(shown, line, f"YAML syntax error: {detail}")]
    except yaml.YAMLError as exc:
        return None, [Problem(shown, 1, f"YAML syntax error: {exc}")]
    if root is None:
        return None, [Problem(shown, 1, "the file is empty")]
    doc = Document(shown=shown, data=None, lines={(): 1})
    try:
        doc.data = _plain(root, (), doc)
    except yaml.YAMLError as exc:  # a scalar with a bad tag (`!!int abc`)
        mark = getattr(exc, "problem_mark", None)
        return None, [Problem(shown, mark.line + 1 if mark else 1, f"YAML error: {exc}")]
    return doc, []


# --- field types ----------------------------------------------------------------------------


def _text(value: Any) -> Any:
    # YAML reads `title: 42` as a number; a prose field takes it as the text the author wrote.
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise refusal("empty", "is empty")
    return value


def _slug(value: str) -> str:
    if not _SLUG.match(value):
        raise refusal("slug", f"{value!r} must be lowercase letters, digits and hyphens")
    return value


Text = Annotated[str, BeforeValidator(_text)]
Slug = Annotated[str, BeforeValidator(_text), AfterValidator(_slug)]


def choice(values: tuple[str, ...], noun: str = "value"):
    """A text that must be one of `values`: "unknown <noun> 'x' (expected one of: a, b)"."""

    def check(value: str) -> str:
        if value not in values:
            expected = ", ".join(values)
            raise refusal("choice", f"unknown {noun} {value!r} (expected one of: {expected})")
        return value

    return Annotated[str, BeforeValidator(_text), AfterValidator(check)]


def count(kind: Any, low: int = 0, high: int | None = None):
    """A list of `kind` with `low` to `high` items: "expected 4 to 6 items, found 2"."""

    def check(items: list) -> list:
        n = len(items)
        if n < low or (high is not None and n > high):
            wanted = f"{low} to {high}" if high is not None else f"at least {low}"
            raise refusal("count", f"expected {wanted} items, found {n}")
        return items

    return Annotated[kind, AfterValidator(check)]


def refusal(kind: str, message: str) -> PydanticCustomError:
    """Raise from a validator: `message` is shown as it is (no pydantic "Value error, ")."""
    # The message goes in as context, not as the template, so braces in it stay literal.
    return PydanticCustomError(kind, "{message}", {"message": message})


def located_error(at: Loc, message: str) -> PydanticCustomError:
    """Raise from a model validator to report `message` at the sub-field `at` of that model."""
    return PydanticCustomError("located", "{message}", {"message": message, "at": list(at)})


# --- validating -----------------------------------------------------------------------------


def _unwrap(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, type(int | None)):
        options = [a for a in get_args(annotation) if a is not type(None)]
        if len(options) == 1:
            return _unwrap(options[0])
    return annotation


def _model_at(model: type[YamlModel], loc: Loc) -> Any:
    """The model class (or other type) that validates the value at `loc`."""
    current: Any = model
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel) and isinstance(part, str):
            info = _field_by_key(current, part)
            if info is None:
                return None
            current = info.annotation
        elif get_origin(current) in (list, tuple) and isinstance(part, int):
            current = get_args(current)[0]
        elif get_origin(current) is dict:
            current = get_args(current)[1]
        else:
            return None
    return _unwrap(current)


def _field_by_key(model: type[BaseModel], key: str):
    for name, info in model.model_fields.items():
        if (info.alias or name) == key:
            return info
    return None


def _keys(model: Any) -> list[str]:
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [info.alias or name for name, info in model.model_fields.items()]
    return []


def _noun(model: Any) -> str:
    return getattr(model, "yaml_noun", "field")


def _where(root: type[YamlModel], loc: Loc) -> str:
    if not loc:
        return root.yaml_name
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list):
        return "list"
    return "value"


def _message(root: type[YamlModel], error: dict) -> tuple[Loc, Loc, str]:
    """(where the message is about, where its line is, message) for one pydantic error."""
    loc: Loc = tuple(error["loc"])
    kind, value, ctx = error["type"], error.get("input"), error.get("ctx") or {}
    if kind == "missing":
        parent = loc[:-1]
        noun = _noun(_model_at(root, parent))
        return parent, parent, f"missing {noun} {loc[-1]!r}"
    if kind == "extra_forbidden":
        parent = loc[:-1]
        model = _model_at(root, parent)
        expected = ", ".join(_keys(model))
        return parent, loc, f"unknown {_noun(model)} {loc[-1]!r} (expected one of: {expected})"
    if kind == "located":
        at = (*loc, *ctx.get("at", ()))
        return loc, at, ctx["message"]
    if kind in ("string_type", "string_sub_type"):
        return loc, loc, f"expected text, found a {_kind(value)}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        shown = value if not isinstance(value, dict | list) else _kind(value)
        return loc, loc, f"expected a whole number, found {shown!r}"
    if kind in ("float_type", "float_parsing"):
        shown = value if not isinstance(value, dict | list) else _kind(value)
        return loc, loc, f"expected a number, found {shown!r}"
    if kind in ("bool_type", "bool_parsing"):
        return loc, loc, f"expected true or false, found {value!r}"
    if kind in ("list_type", "tuple_type"):
        return loc, loc, f"expected a list, found a {_kind(value)}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return loc, loc, f"expected a mapping of {_noun(_model_at(root, loc))}s"
    if "message" in ctx:  # refusal()
        return loc, loc, ctx["message"]
    message = error["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    return loc, loc, message[:1].lower() + message[1:]


def _error_loc(error: dict) -> Loc:
    # Pydantic puts a tagged-union member's name in `loc`; keys in the file never hold one.
    return tuple(error["loc"])


def document_validate(
    doc: Document, model: type[YamlModel], *, context: dict | None = None
) -> tuple[Any, list[Problem]]:
    """The validated model (None if anything is wrong) and every problem, sorted by line."""
    problems: list[Problem] = []
    for parent, key, line, first in doc.duplicates:
        noun = _noun(_model_at(model, parent))
        where = _where(model, parent)
        message = f"{where}: duplicate {noun} {key!r} (first on line {first})"
        problems.append(Problem(doc.shown, line, message))
    instance = None
    try:
        instance = model.model_validate(doc.data, context=context or {})
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            about, at, message = _message(model, error)
            problems.append(doc.problem(at, f"{_where(model, about)}: {message}"))
    problems.sort(key=lambda p: p.line)
    return (instance if not problems else None), problems


def model_check(
    path: Path, model: type[YamlModel], *, shown: str | None = None, context: dict | None = None
) -> tuple[Any, list[Problem], Document | None]:
    """document_load + document_validate in one call: (model or None, problems, document)."""
    doc, problems = document_load(path, shown=shown)
    if doc is None:
        return None, problems, None
    instance, problems = document_validate(doc, model, context=context)
    return instance, problems, doc


def validation_messages(root: type[YamlModel], exc: ValidationError) -> list[str]:
    """`where: message` for each of pydantic's errors, in the wording above, for data that
    did not come from a YAML file (a JSON upload has no lines to point at)."""
    messages = []
    for error in exc.errors(include_url=False):
        about, at, message = _message(root, error)
        # Without lines to point at, a located_error names the field it is about.
        messages.append(f"{_where(root, at if error['type'] == 'located' else about)}: {message}")
    return messages

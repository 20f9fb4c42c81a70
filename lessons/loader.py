"""Read lesson YAML files into Questions, collecting every problem with its line.

PyYAML's composed node tree keeps a mark (line) for every key and value, so each problem
points at the line an author has to fix. The validator command and the app both call
`check_files`, which is why a bad file is refused with the same messages everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from django.conf import settings
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from lessons import schema
from lessons.lesson import Claim, CodeSample, Followup, LessonError, Problem, Question
from lessons.rendering import count_words, has_table

STR_TAG = "tag:yaml.org,2002:str"
INT_TAG = "tag:yaml.org,2002:int"
NULL_TAG = "tag:yaml.org,2002:null"
_SLUG = re.compile(schema.SLUG_PATTERN)


def display_path(path: Path) -> str:
    """Paths inside the project print relative to it, like the files an author opens."""
    try:
        return str(Path(path).resolve().relative_to(Path(settings.BASE_DIR).resolve()))
    except ValueError:
        return str(path)


def _line(node: Node) -> int:
    return node.start_mark.line + 1


def _choices(values) -> str:
    return ", ".join(values)


class _FileCheck:
    """Walks one file's node tree; every check appends problems and returns a value or None."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.shown = display_path(path)
        self.problems: list[Problem] = []

    def problem(self, line: int, message: str) -> None:
        self.problems.append(Problem(self.shown, line, message))

    # --- shapes -------------------------------------------------------------------------

    def mapping(
        self, node: Node, fields: dict[str, bool], where: str, at: int, noun: str = "field"
    ) -> dict[str, tuple[int, Node]] | None:
        """Keys -> (key line, value node); unknown, duplicate and missing keys reported."""
        if not isinstance(node, MappingNode):
            self.problem(_line(node) if node else at, f"{where}: expected a mapping of {noun}s")
            return None
        found: dict[str, tuple[int, Node]] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, ScalarNode) else None
            if key is None or key not in fields:
                self.problem(
                    _line(key_node),
                    f"{where}: unknown {noun} {key!r} (expected one of: {_choices(fields)})",
                )
                continue
            if key in found:
                self.problem(
                    _line(key_node),
                    f"{where}: duplicate {noun} {key!r} (first on line {found[key][0]})",
                )
                continue
            found[key] = (_line(key_node), value_node)
        for key, required in fields.items():
            if required and key not in found:
                self.problem(at, f"{where}: missing {noun} {key!r}")
        return found

    def text(self, node: Node, where: str) -> str | None:
        if not isinstance(node, ScalarNode):
            self.problem(_line(node), f"{where}: expected text, found a {_kind(node)}")
            return None
        if node.tag == NULL_TAG or not str(node.value).strip():
            self.problem(_line(node), f"{where}: is empty")
            return None
        return str(node.value)

    def integer(self, node: Node, where: str) -> int | None:
        if not isinstance(node, ScalarNode) or node.tag != INT_TAG:
            shown = node.value if isinstance(node, ScalarNode) else _kind(node)
            self.problem(_line(node), f"{where}: expected a whole number, found {shown!r}")
            return None
        return int(node.value)

    def choice(
        self, node: Node, choices: tuple[str, ...], where: str, noun: str = "value"
    ) -> str | None:
        value = self.text(node, where)
        if value is not None and value not in choices:
            self.problem(
                _line(node),
                f"{where}: unknown {noun} {value!r} (expected one of: {_choices(choices)})",
            )
            return None
        return value

    def slug(self, node: Node, where: str) -> str | None:
        value = self.text(node, where)
        if value is not None and not _SLUG.match(value):
            self.problem(
                _line(node), f"{where}: {value!r} must be lowercase letters, digits and hyphens"
            )
            return None
        return value

    def sequence(
        self, node: Node, where: str, at: int, minimum: int = 0, maximum: int | None = None
    ) -> list[Node] | None:
        if not isinstance(node, SequenceNode):
            self.problem(_line(node), f"{where}: expected a list, found a {_kind(node)}")
            return None
        count = len(node.value)
        if count < minimum or (maximum is not None and count > maximum):
            wanted = f"{minimum} to {maximum}" if maximum is not None else f"at least {minimum}"
            self.problem(at, f"{where}: expected {wanted} items, found {count}")
        return list(node.value)

    # --- the file -----------------------------------------------------------------------

    def question(self, root: Node) -> Question | None:
        fields = self.mapping(root, schema.FIELDS, "lesson", 1)
        if fields is None:
            return None
        values: dict[str, object] = {}

        def value(name: str, check) -> None:
            if name in fields:
                values[name] = check(*fields[name])

        value("slug", lambda at, n: self.slug(n, "slug"))
        value("order", lambda at, n: self.integer(n, "order"))
        value("title", lambda at, n: self.text(n, "title"))
        value("prompt", lambda at, n: self.text(n, "prompt"))
        value("level", lambda at, n: self.choice(n, schema.LEVELS, "level", "level"))
        value(
            "importance",
            lambda at, n: self.choice(n, schema.IMPORTANCE, "importance", "importance"),
        )
        value("frequency", lambda at, n: self.choice(n, schema.FREQUENCY, "frequency", "frequency"))
        value("key_points", self.key_points)
        value("tiers", self.tiers)
        value("code_samples", self.code_samples)
        value("go_deeper", self.go_deeper)
        value("followups", self.followups)
        slug = values.get("slug") or "?"
        value("claims_cost", lambda at, n: self.claims(at, n, slug, holds=False))
        value("claims_hold", lambda at, n: self.claims(at, n, slug, holds=True))
        value("experiments", self.experiments)
        if self.problems:
            return None
        return Question(**values, path=self.path)

    def key_points(self, at: int, node: Node) -> list[str] | None:
        low, high = schema.KEY_POINTS
        items = self.sequence(node, "key_points", at, low, high)
        if items is None:
            return None
        return [self.text(item, f"key_points[{i}]") for i, item in enumerate(items)]

    def tiers(self, at: int, node: Node) -> dict[str, str] | None:
        found = self.mapping(node, schema.TIER_FIELDS, "tiers", at, noun="tier")
        if found is None:
            return None
        tiers: dict[str, str] = {}
        for tier, (line, value_node) in found.items():
            text = self.text(value_node, f"tiers.{tier}")
            if text is None:
                continue
            tiers[tier] = text
            words = count_words(text)
            low, high = schema.TIER_WORDS[tier]
            if high is not None and words > high:
                self.problem(line, f"tiers.{tier}: {words} words, over the limit of {high}")
            if low is not None and words < low:
                self.problem(line, f"tiers.{tier}: {words} words, under the minimum of {low}")
            if tier == "senior" and not has_table(text):
                self.problem(
                    line, "tiers.senior: no Markdown table (the senior tier needs at least one)"
                )
        return tiers

    def code_samples(self, at: int, node: Node) -> list[CodeSample] | None:
        items = self.sequence(node, "code_samples", at, schema.MIN_CODE_SAMPLES)
        if items is None:
            return None
        samples = []
        for i, item in enumerate(items):
            where = f"code_samples[{i}]"
            found = self.mapping(item, schema.CODE_SAMPLE_FIELDS, where, _line(item))
            if found is None:
                continue
            got = {}
            for name, (_, value_node) in found.items():
                if name == "language":
                    got[name] = self.choice(
                        value_node, schema.LANGUAGES, f"{where}.language", "code language"
                    )
                elif name == "tier":
                    got[name] = self.choice(value_node, schema.TIERS, f"{where}.tier", "tier")
                else:
                    got[name] = self.text(value_node, f"{where}.{name}")
            if all(got.get(k) is not None for k, req in schema.CODE_SAMPLE_FIELDS.items() if req):
                samples.append(CodeSample(**{k: v for k, v in got.items() if v is not None}))
        return samples

    def go_deeper(self, at: int, node: Node) -> dict[str, str] | None:
        found = self.mapping(node, schema.GO_DEEPER_FIELDS, "go_deeper", at, noun="level")
        if found is None:
            return None
        prompts = {}
        for level in schema.LEVELS:
            if level in found:
                prompts[level] = self.text(found[level][1], f"go_deeper.{level}")
        return prompts

    def followups(self, at: int, node: Node) -> list[Followup] | None:
        items = self.sequence(node, "followups", at, schema.MIN_FOLLOWUPS)
        if items is None:
            return None
        followups = []
        for i, item in enumerate(items):
            where = f"followups[{i}]"
            found = self.mapping(item, schema.FOLLOWUP_FIELDS, where, _line(item))
            if found is None:
                continue
            got = {name: self.text(n, f"{where}.{name}") for name, (_, n) in found.items()}
            if all(got.get(k) for k in schema.FOLLOWUP_FIELDS):
                followups.append(Followup(**got))
        return followups

    def claims(self, at: int, node: Node, slug: str, *, holds: bool) -> list[Claim] | None:
        name = "claims_hold" if holds else "claims_cost"
        fields = schema.CLAIM_HOLD_FIELDS if holds else schema.CLAIM_COST_FIELDS
        minimum = schema.MIN_CLAIMS_HOLD if holds else schema.MIN_CLAIMS_COST
        items = self.sequence(node, name, at, minimum)
        if items is None:
            return None
        claims = []
        for i, item in enumerate(items):
            where = f"{name}[{i}]"
            found = self.mapping(item, fields, where, _line(item))
            if found is None:
                continue
            got: dict[str, str | None] = {}
            for field_name, (_, value_node) in found.items():
                label = f"{where}.{field_name}"
                if field_name == "id":
                    got["id"] = self.slug(value_node, label)
                elif field_name == "tier":
                    got["tier"] = self.choice(value_node, schema.TIERS, label, "tier")
                else:
                    got[field_name] = self.text(value_node, label)
            if any(got.get(k) is None for k in fields):
                continue
            claims.append(
                Claim(
                    key=f"{slug}:{got['id']}",
                    id=got["id"],
                    question_slug=slug,
                    text=got["claim"],
                    holds=holds,
                    why=got["why"] if holds else got["why_wrong"],
                    truth=None if holds else got["truth"],
                    tier=got["tier"],
                )
            )
        return claims

    def experiments(self, at: int, node: Node) -> list[str] | None:
        if isinstance(node, ScalarNode) and node.tag == NULL_TAG:
            return []
        items = self.sequence(node, "experiments", at)
        if items is None:
            return None
        return [self.slug(item, f"experiments[{i}]") for i, item in enumerate(items)]


def _kind(node: Node | None) -> str:
    if isinstance(node, MappingNode):
        return "mapping"
    if isinstance(node, SequenceNode):
        return "list"
    return "value"


def _claim_id_lines(root: Node) -> list[tuple[str, int]]:
    """(id, line) of every claim in the file, cost and hold together, in file order."""
    out: list[tuple[str, int]] = []
    if not isinstance(root, MappingNode):
        return out
    for key_node, value_node in root.value:
        if getattr(key_node, "value", None) not in ("claims_cost", "claims_hold"):
            continue
        if not isinstance(value_node, SequenceNode):
            continue
        for item in value_node.value:
            if not isinstance(item, MappingNode):
                continue
            for k, v in item.value:
                if getattr(k, "value", None) == "id" and isinstance(v, ScalarNode):
                    out.append((str(v.value), _line(v)))
    return out


def compose_file(path: Path) -> tuple[Node | None, list[Problem]]:
    """The file's node tree, or the YAML syntax problem with its line."""
    shown = display_path(path)
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
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        detail = " ".join(p for p in (exc.context, exc.problem) if p)
        return None, [Problem(shown, line, f"YAML syntax error: {detail}")]
    except yaml.YAMLError as exc:
        return None, [Problem(shown, 1, f"YAML syntax error: {exc}")]
    if root is None:
        return None, [Problem(shown, 1, "the file is empty")]
    return root, []


def check_file(path: Path) -> tuple[Question | None, list[Problem]]:
    """One file on its own: the Question if it is sound, and every problem found."""
    question, problems, _ = _check(Path(path))
    return question, problems


def _check(path: Path) -> tuple[Question | None, list[Problem], Node | None]:
    root, problems = compose_file(path)
    if root is None:
        return None, problems, None
    check = _FileCheck(path)
    question = check.question(root)
    seen: dict[str, int] = {}
    for claim_id, line in _claim_id_lines(root):
        if claim_id in seen:
            check.problem(line, f"duplicate claim id {claim_id!r} (first on line {seen[claim_id]})")
        else:
            seen[claim_id] = line
    check.problems.sort(key=lambda p: p.line)
    return (question if not check.problems else None), check.problems, root


def _slug_and_order_lines(root: Node) -> dict[str, int]:
    lines = {}
    if isinstance(root, MappingNode):
        for k, v in root.value:
            if getattr(k, "value", None) in ("slug", "order"):
                lines[k.value] = _line(v)
    return lines


@dataclass
class Checked:
    """Result of checking a set of files: the sound questions and every problem."""

    questions: list[Question]
    problems: list[Problem]
    broken: dict[str, list[Problem]]  # shown path -> its problems


def check_files(paths: list[Path]) -> Checked:
    """Every file checked alone, then across files (a slug or order used twice: the later
    file by name is refused, so the first keeps working)."""
    questions: list[Question] = []
    problems: list[Problem] = []
    by_slug: dict[str, Question] = {}
    by_order: dict[int, Question] = {}
    for path in sorted(Path(p) for p in paths):
        question, found, root = _check(path)
        if question is not None:
            lines = _slug_and_order_lines(root)
            shown = display_path(path)
            first = by_slug.get(question.slug)
            if first is not None:
                found.append(
                    Problem(
                        shown,
                        lines.get("slug", 1),
                        f"slug: duplicate slug {question.slug!r} (also in {display_path(first.path)})",
                    )
                )
            other = by_order.get(question.order)
            if other is not None:
                found.append(
                    Problem(
                        shown,
                        lines.get("order", 1),
                        f"order: duplicate order {question.order} (also in {display_path(other.path)})",
                    )
                )
            if not found:
                by_slug[question.slug] = question
                by_order[question.order] = question
                questions.append(question)
        problems.extend(found)
    broken: dict[str, list[Problem]] = {}
    for p in problems:
        broken.setdefault(p.path, []).append(p)
    questions.sort(key=lambda q: (q.order, q.slug))
    return Checked(questions=questions, problems=problems, broken=broken)


def lesson_dir() -> Path:
    return Path(getattr(settings, "LESSONS_DIR", Path(settings.BASE_DIR) / "lessons" / "content"))


def lesson_files(directory: Path | None = None) -> list[Path]:
    directory = Path(directory or lesson_dir())
    return sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")])


def load_file(path: Path) -> Question:
    """One sound Question, or LessonError with every problem in the file."""
    question, problems = check_file(Path(path))
    if problems or question is None:
        raise LessonError(problems)
    return question

"""YAML with line numbers: plain data plus a map from each value's path to its source line.

Validators report "file:line: problem"; PyYAML's composed nodes know their lines, so we walk
them once instead of guessing lines from the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from lessons.yamlread import compose

Path = tuple[str | int, ...]


@dataclass
class Located:
    """A parsed document and the 1-based line where each path starts."""

    data: object
    lines: dict[Path, int] = field(default_factory=dict)
    duplicates: list[tuple[Path, int]] = field(default_factory=list)

    def line(self, path: Path) -> int:
        """The line of `path`, or of its nearest ancestor that has one."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), 1)


class YamlError(ValueError):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def located_load(text: str) -> Located:
    """Parse one YAML document safely, remembering lines; raises YamlError on bad YAML."""
    located = Located(data=None)
    try:
        node = compose(text)
        if node is not None:  # a tag no safe constructor knows (`!thing`) fails in _build
            located.data = _build(node, (), located, yaml.SafeLoader(""))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise YamlError(f"not valid YAML: {problem}", line) from exc
    return located


def _build(node: yaml.Node, path: Path, located: Located, constructor: yaml.SafeLoader):
    located.lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        result: dict = {}
        for key_node, value_node in node.value:
            key = constructor.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                key = str(key)
            child = (*path, key)
            if key in result:
                located.duplicates.append((child, key_node.start_mark.line + 1))
            result[key] = _build(value_node, child, located, constructor)
            located.lines[child] = key_node.start_mark.line + 1
        return result
    if isinstance(node, yaml.SequenceNode):
        return [
            _build(item, (*path, index), located, constructor)
            for index, item in enumerate(node.value)
        ]
    return constructor.construct_object(node, deep=True)

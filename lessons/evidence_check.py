"""Does a `source` reference still show what the lesson says? Each one names a function (or a
class attribute) in an installed package and a `shows:` line that must appear in its source.
An upgrade that rewrites the function makes `validatelessons` fail, naming the claim, instead of
leaving the lesson silently wrong about the new version.

The source is read from the installed file with `ast`, not by importing the module: some
transports import optional clients at import time (kombu's SQS transport needs botocore), and
reading must not run a module's side effects.
"""

from __future__ import annotations

import ast
import importlib.util
from functools import lru_cache
from pathlib import Path

_DEFS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def normalise(text: str) -> str:
    """Whitespace-insensitive: a line wrapped differently by a formatter still matches."""
    return " ".join(str(text).split())


@lru_cache(maxsize=64)
def _module_source(module: str) -> tuple[str, str] | None:
    """(path, text) of the installed module's source file, or None when it is not installed."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    try:
        return spec.origin, Path(spec.origin).read_text(encoding="utf-8")
    except OSError:
        return None


def _member(body: list[ast.stmt], name: str) -> ast.AST | None:
    """A def or class named `name` in `body`, else an assignment to it (a class attribute)."""
    for node in body:
        if isinstance(node, _DEFS) and node.name == name:
            return node
    for node in body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return node
    return None


@lru_cache(maxsize=64)
def _parsed(text: str) -> tuple[list[ast.stmt], list[str]] | None:
    """A module's top-level statements and its lines, parsed once: the lessons cite about 170
    functions in some 25 modules, and parsing a module per reference took 9 s of the 10 the
    evidence check spent."""
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return None
    return body, text.splitlines(keepends=True)


def function_node(text: str, function: str) -> ast.AST | None:
    """The node of `function` ("Class.method", "outer.inner" for a nested def, "name" for a
    module-level function or constant) in module source `text`, or None when it is not there."""
    parsed = _parsed(text)
    if parsed is None:
        return None
    body: list[ast.stmt] = parsed[0]
    node: ast.AST | None = None
    for part in function.split("."):
        node = _member(body, part)
        if node is None:
            return None
        body = getattr(node, "body", [])
    return node


def function_source(module: str, function: str) -> str | None:
    """The source of `function` in the installed `module`, or None when it is gone."""
    found = _module_source(module)
    if found is None:
        return None
    _, text = found
    node = function_node(text, function)
    return None if node is None else _segment(text, node)


def _segment(text: str, node: ast.AST) -> str:
    """ast.get_source_segment on the kept lines (it splits the whole module on every call);
    the offsets are UTF-8 byte offsets, as there."""
    lines = _parsed(text)[1][node.lineno - 1 : node.end_lineno]
    if len(lines) == 1:
        return lines[0].encode()[node.col_offset : node.end_col_offset].decode()
    first = lines[0].encode()[node.col_offset :].decode()
    last = lines[-1].encode()[: node.end_col_offset].decode()
    return "".join([first, *lines[1:-1], last])


def source_problem(*, module: str, function: str, shows: tuple[str, ...]) -> str | None:
    """Why the reference no longer holds, or None when every `shows` line is in the source."""
    if _module_source(module) is None:
        return f"module {module} is not installed (or has no Python source)"
    source = function_source(module, function)
    if source is None:
        return f"{module} has no {function}"
    haystack = normalise(source)
    missing = [line for line in shows if normalise(line) not in haystack]
    if missing:
        shown = "; ".join(repr(line) for line in missing)
        return f"{module} {function} no longer shows {shown}"
    return None

"""A library function as the installed version has it, for a lesson's `source` evidence: read
from the package's own files at request time (cached per file), with the lines the lessons cite
(`shows:`) marked. Only the packages the lessons cite can be read, and a module name is turned
into a path one identifier at a time below that package's folder, so no request can name a file
outside it. Nothing is imported: reading must not run a module (lessons/evidence_check.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from importlib.machinery import PathFinder
from pathlib import Path

from lessons.evidence_check import function_node, normalise

# The broker stack the lessons cite; anything else is refused (404).
ALLOWED_PACKAGES = ("celery", "kombu", "amqp", "redis", "billiard", "vine")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
SHOWS_SPAN_MAX = 12  # lines: a `shows:` text wrapped by a formatter spans a few, never more


@dataclass(frozen=True)
class SourceView:
    """`code` is the function's source as installed, `first_line` its line in `path_shown`;
    `marked` the 1-based lines of `code` that show what the lessons cite."""

    package: str
    version: str
    module: str
    function: str
    path_shown: str
    first_line: int
    code: str
    marked: tuple[int, ...]


@lru_cache(maxsize=len(ALLOWED_PACKAGES))
def package_root(package: str) -> Path | None:
    """The installed package's folder (its __init__.py's parent), if it is allowed."""
    if package not in ALLOWED_PACKAGES:
        return None
    # PathFinder looks on sys.path, not at sys.modules: kombu swaps its imported module for a
    # lazy one whose __spec__ is None, which importlib.util.find_spec refuses.
    spec = PathFinder.find_spec(package)
    if spec is None or not spec.origin or not spec.submodule_search_locations:
        return None
    return Path(spec.origin).resolve().parent


def module_file(module: str) -> Path | None:
    """The .py file of `module` inside an allowed package, or None."""
    if not _DOTTED.match(module or ""):
        return None
    top, *rest = module.split(".")
    root = package_root(top)
    if root is None:
        return None
    for candidate in (root.joinpath(*rest, "__init__.py"), root.joinpath(*rest).with_suffix(".py")):
        resolved = candidate.resolve()
        if resolved.is_relative_to(root) and resolved.is_file():
            return resolved
    return None


@lru_cache(maxsize=64)
def _read(path: str, stamp: int) -> str:
    return Path(path).read_text(encoding="utf-8")


def marked_lines(lines: list[str], shows: tuple[str, ...]) -> tuple[int, ...]:
    """1-based lines of `lines` holding each `shows` text (whitespace-insensitive, so a text
    wrapped over several lines marks all of them): the first, tightest place each appears."""
    marked: set[int] = set()
    for text in shows:
        wanted = normalise(text)
        for end in range(len(lines)):
            start = next(
                (
                    s
                    for s in range(end, max(-1, end - SHOWS_SPAN_MAX), -1)
                    if wanted in normalise(" ".join(lines[s : end + 1]))
                ),
                None,
            )
            if start is not None:
                marked.update(range(start + 1, end + 2))
                break
    return tuple(sorted(marked))


def source_view(module: str, function: str, shows: tuple[str, ...] = ()) -> SourceView | None:
    """The installed source of `function` in `module`, or None when either is not there or
    the package is not one the lessons may show."""
    if not _DOTTED.match(function or ""):
        return None
    path = module_file(module)
    if path is None:
        return None
    try:
        text = _read(str(path), path.stat().st_mtime_ns)
    except (OSError, UnicodeDecodeError):
        return None
    node = function_node(text, function)
    if node is None:
        return None
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)])
    lines = text.splitlines()[first - 1 : node.end_lineno]
    package = module.split(".")[0]
    try:
        version = metadata.version(package)
    except metadata.PackageNotFoundError:
        version = "unknown"
    root = package_root(package)
    return SourceView(
        package=package,
        version=version,
        module=module,
        function=function,
        path_shown=f"{package}/{path.relative_to(root).as_posix()}",
        first_line=first,
        code="\n".join(lines),
        marked=marked_lines(lines, shows),
    )

"""Reading YAML quickly and safely: every YAML file the app reads goes through here.

libyaml's parser when PyYAML was built with it (the wheels are) is about ten times faster
than the pure-Python one, with the same nodes and line marks; the fast test loop and every
catalog reload depend on it (docs/testing.md, "The fast loop")."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import Node

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def compose(text: str) -> Node | None:
    """The node tree of one YAML document, with line marks. libyaml encodes the text to UTF-8
    first and fails on a lone surrogate with UnicodeEncodeError; the pure-Python parser turns
    that into the YAMLError every caller handles."""
    try:
        return yaml.compose(text, Loader=LOADER)
    except UnicodeEncodeError:
        return yaml.compose(text, Loader=yaml.SafeLoader)


def file_data(path: Path) -> Any:
    """The plain data of a YAML file, parsed once per version of the file (its mtime and size):
    the cross-reference readers (experiment slugs and checks, lesson claims) ask for the same
    files on every catalog reload. Raises OSError, UnicodeDecodeError or yaml.YAMLError like
    a fresh read; callers must not change what they get."""
    stat = Path(path).stat()
    return _file_data(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=256)
def _file_data(path: str, _mtime_ns: int, _size: int) -> Any:
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=LOADER)  # noqa: S506 (safe)

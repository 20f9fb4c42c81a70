"""How a file's path is printed in a problem or on a page: relative to the project, like the
files an author opens. A module of its own because the loader, the evidence readers, the
glossary and the lab's experiment catalog all print paths, and the loader imports them."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings


def display_path(path: Path) -> str:
    """Paths inside the project print relative to it, like the files an author opens."""
    try:
        return str(Path(path).resolve().relative_to(Path(settings.BASE_DIR).resolve()))
    except ValueError:
        return str(path)

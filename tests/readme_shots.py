"""The README's pictures, taken by the browser walks that already drive those pages so they
stay current: run those walks with TEACHLAB_SCREENSHOTS=1 (docs/testing.md, "Layout") and
commit what changed in docs/img/."""

from __future__ import annotations

import os
from pathlib import Path

IMG = Path(__file__).resolve().parent.parent / "docs" / "img"


def readme_screenshot(page, name: str, *, show: str = "") -> None:
    """Save the page's viewport as docs/img/<name>.png, scrolled to the `show` selector, only
    when asked: a normal run leaves the committed pictures and the page as they are."""
    if os.environ.get("TEACHLAB_SCREENSHOTS") != "1":
        return
    IMG.mkdir(parents=True, exist_ok=True)
    if show:
        page.locator(show).first.scroll_into_view_if_needed()
    page.screenshot(path=str(IMG / f"{name}.png"))

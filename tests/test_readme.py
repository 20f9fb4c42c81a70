"""The README stays a user's page and the docs stay true: a short README whose Quick start is
the two promised commands, no measurement history in it (no dates, no commit hashes), links in
the README and docs/ that lead somewhere, every setting documented, every page it lists served."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import Resolver404, resolve

BASE = Path(__file__).resolve().parent.parent
README = BASE / "README.md"
DOCS = BASE / "docs"

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
# 7 to 40 hex digits with at least one digit and one letter: a (short) commit id, not a number
# such as 2097152 nor a word such as "defaced".
COMMIT = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")


def quick_start_block(text: str) -> list[str]:
    """The lines of the first fenced block under the "## Quick start" heading."""
    section = text.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    block = FENCE.search(section)
    assert block, "the Quick start section has no fenced code block"
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def relative_links(path: Path) -> list[str]:
    """Link targets in a Markdown file outside code blocks, without web or mail addresses and
    without the #fragment."""
    text = FENCE.sub("", path.read_text())
    text = re.sub(r"`[^`\n]*`", "", text)
    found = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        found.append(target.split("#", 1)[0])
    return found


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def test_the_readme_is_at_most_200_lines():
    lines = README.read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move detail to docs/"


def test_the_quick_start_block_holds_exactly_the_run_and_test_commands():
    assert quick_start_block(README.read_text()) == ["scripts/run", "scripts/test"]


def test_the_readme_names_no_date():
    found = DATE.findall(README.read_text())
    assert not found, f"dates belong in docs/measurements/, not the README: {found}"


def test_the_readme_names_no_commit_hash():
    found = COMMIT.findall(README.read_text())
    assert not found, f"commit ids belong in docs/measurements/, not the README: {found}"


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(BASE)))
def test_every_relative_link_leads_to_a_file_that_exists(path):
    missing = [t for t in relative_links(path) if not (path.parent / t).exists()]
    assert not missing, f"{path.relative_to(BASE)} links to missing files: {missing}"


def test_every_setting_read_from_the_environment_is_documented():
    settings = (BASE / "teachlab" / "settings.py").read_text()
    names = {
        f"TEACHLAB_{n}" for n in re.findall(r"\benv(?:_int|_bool)?\(\s*\"([A-Z0-9_]+)\"", settings)
    }
    names |= set(re.findall(r"os\.environ(?:\.get)?\(\s*\"([A-Z0-9_]+)\"", settings))
    assert len(names) > 40, "the pattern no longer finds the settings' variables"
    documented = (DOCS / "configuration.md").read_text()
    missing = sorted(n for n in names if f"`{n}`" not in documented)
    assert not missing, f"docs/configuration.md does not name {missing}"


def readme_addresses() -> list[str]:
    """The addresses in the first column of the README's table of pages."""
    section = README.read_text().split("\n## The pages\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [a for row in rows for a in re.findall(r"`(/[^`]*)`", row.split("|")[1])]


def test_every_page_the_readme_lists_is_served():
    addresses = readme_addresses()
    assert "/lab/" in addresses
    for address in addresses:
        if address in {"/healthz", "/readyz"}:  # answered by middleware, before the URLconf
            continue
        try:
            resolve(re.sub(r"<[^>]+>", "sample", address))
        except Resolver404:
            pytest.fail(f"README lists {address}, which no URL pattern serves")

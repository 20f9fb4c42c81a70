"""Time `scripts/test --fast` and keep the result as data: one JSON file per run in
docs/measurements/results/ ({"name", "command", "commit", "machine": {"cores", "load"},
"started", "goal", "figures": {"seconds", "passed", ...}}), for the fast loop's goal of under
two minutes on this machine kind (docs/testing.md, "The fast loop").

    .venv/bin/python scripts/measure_fast_loop.py --runs 3

Run it after set-up (scripts/setup), from the checkout being measured. Each run's output is
kept in test-artifacts/fast-loop-<n>.log.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
RESULTS = BASE_DIR / "docs" / "measurements" / "results"
COMMAND = ["scripts/test", "--fast"]
GOAL = "scripts/test --fast under 120 s on 2 cores"


def outcome_counts(output: str) -> dict[str, int]:
    """pytest's closing counts ("12 passed, 1 failed, 3 deselected in 9.1s") as a dict."""
    lines = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    if not lines:
        return {}
    return {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", lines[-1]) if word != "in"}


def commit() -> str:
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=BASE_DIR, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"{head}-dirty" if dirty else head


def measure_once(number: int, out: Path) -> dict:
    log = BASE_DIR / "test-artifacts" / f"fast-loop-{number}.log"
    log.parent.mkdir(exist_ok=True)
    started = time.time()
    load = round(os.getloadavg()[0], 2)
    began = time.monotonic()
    done = subprocess.run(COMMAND, cwd=BASE_DIR, capture_output=True, text=True)
    seconds = round(time.monotonic() - began, 1)
    log.write_text(done.stdout + done.stderr)
    counts = outcome_counts(done.stdout)
    result = {
        "name": "fast-loop",
        "command": " ".join(COMMAND),
        "commit": commit(),
        "machine": {"cores": os.cpu_count(), "load": load},
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "goal": GOAL,
        "figures": {
            "seconds": seconds,
            "passed": counts.get("passed", 0),
            "failed": counts.get("failed", 0),
            "exit": done.returncode,
        },
    }
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"fast-loop-{number}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"run {number}: {seconds} s, {counts} (load {load}) -> {path}")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--first", type=int, default=1, help="number of the first result file")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    results = [measure_once(args.first + n, args.out) for n in range(args.runs)]
    return 0 if all(r["figures"]["exit"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

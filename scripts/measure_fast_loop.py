"""Time `scripts/test --fast` and keep each run as a result file in docs/measurements/results/
(teachlab/core/measurements.py), against the fast loop's goal: under two minutes on this machine
kind, after set-up (docs/testing.md, "The fast loop").

    .venv/bin/python scripts/measure_fast_loop.py --runs 3
    .venv/bin/python scripts/measurements_table.py

Each run's output is kept in test-artifacts/fast-loop-<n>.log; the result files are written
after the last run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

from teachlab.core.measurements import Measurement, out_option_add  # noqa: E402

COMMAND = ["scripts/test", "--fast"]
GOAL = "scripts/test --fast in under 120 s on 2 cores, after set-up"


def outcome_counts(output: str) -> dict[str, int]:
    """pytest's closing counts ("12 passed, 1 failed, 3 deselected in 9.1s") as a dict."""
    lines = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    if not lines:
        return {}
    return {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", lines[-1]) if word != "in"}


def measure_once(number: int) -> tuple[Measurement, dict, int]:
    measurement = Measurement("fast-loop", goal=GOAL)
    began = time.monotonic()
    done = subprocess.run(COMMAND, cwd=BASE_DIR, capture_output=True, text=True)
    seconds = round(time.monotonic() - began, 1)
    log = BASE_DIR / "test-artifacts" / f"fast-loop-{number}.log"
    log.parent.mkdir(exist_ok=True)
    log.write_text(done.stdout + done.stderr)
    counts = outcome_counts(done.stdout)
    figures = {"seconds": seconds, "passed": counts.get("passed", 0)}
    figures["detail"] = {
        "counts": counts,
        "exit": done.returncode,
        "measured": " ".join(COMMAND),
        "load_at_end": round(os.getloadavg()[0], 2),  # the machine is shared: load moves
    }
    print(f"run {number}: {seconds} s, {counts}, load {measurement.load} at start", flush=True)
    return measurement, figures, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    out_option_add(parser)
    args = parser.parse_args()
    runs = [measure_once(n + 1) for n in range(args.runs)]
    # Saved after the last run: a result file that is not in the table yet fails the suite's
    # check of the table (tests/test_measurements_table.py), so the runs must not see one.
    for measurement, figures, _ in runs:
        print(measurement.save(figures, out=args.out))
    return max(code for _, _, code in runs)


if __name__ == "__main__":
    sys.exit(main())

"""scripts/matrix_result.py turns a per-series matrix run into a measurement result the table
script reads, and prints one row per experiment with the verdict per combination."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from teachlab.core.measurements import result_read

BASE_DIR = Path(__file__).resolve().parent.parent


def _record(slug, celery, redis, verdict):
    return {"experiment": slug, "combination": {"celery": celery, "redis": redis},
            "verdict": verdict}  # fmt: skip


def test_a_run_becomes_a_result_file_and_a_table(tmp_path):
    times = tmp_path / "times.txt"
    times.write_text(
        "celery 5.7 redis 6.0,7.0 rc=0 seconds=300\ncelery 5.5 redis 7.0 rc=1 seconds=60\n"
        "total seconds=361\n"
    )
    seven = tmp_path / "matrix-5.7.json"
    seven.write_text(json.dumps([_record("a", "5.7", "6.0", "workers fail"),
                                 _record("a", "5.7", "7.0", "holds")]))  # fmt: skip
    five = tmp_path / "matrix-5.5.json"
    five.write_text(json.dumps([_record("a", "5.5", "7.0", "skipped")]))
    done = subprocess.run(
        [sys.executable, "scripts/matrix_result.py", "--times", str(times), "--started",
         "2026-12-05T21:49:28Z", "--commit", "abc1234", "--command", "scripts/matrix-whole",
         "--out", str(tmp_path), str(seven), str(five)],
        cwd=BASE_DIR, capture_output=True, text=True, check=True,
    )  # fmt: skip
    result = result_read(tmp_path / "lab-matrix-20261205T214928Z.json")
    figures = result["figures"]
    assert (figures["wall_s"], figures["records"], figures["combinations"]) == (361, 3, 3)
    assert (figures["holds"], figures["workers_fail"], figures["skipped"]) == (1, 1, 1)
    assert figures["detail"]["series"]["celery 5.5 × redis 7.0"] == {"exit": 1, "seconds": 60}
    assert "| experiment | 5.5×7.0 | 5.7×6.0 | 5.7×7.0 |" in done.stdout
    assert "| `a` | skip | w. fail | holds |" in done.stdout

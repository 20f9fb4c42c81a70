#!/usr/bin/env python
"""Draw docs/measurements/README.md, the summary table, from the JSON result files in
docs/measurements/results/ (teachlab/core/measurements.py). Run it after adding a result file:

    .venv/bin/python scripts/measurements_table.py [--results DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teachlab.core.measurements import RESULTS_DIR, TABLE_PATH, ResultError, table_write  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS_DIR)
    parser.add_argument("--out", type=Path, default=TABLE_PATH)
    args = parser.parse_args(argv)
    try:
        path = table_write(results=args.results, out=args.out)
    except ResultError as exc:
        print(f"measurements_table: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

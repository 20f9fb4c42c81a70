"""docs/measurements/: the benchmark scripts' JSON result files and the summary table drawn
from them by scripts/measurements_table.py (teachlab/core/measurements.py)."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest

from teachlab.core.measurements import (
    RESULTS_DIR,
    TABLE_PATH,
    Measurement,
    ResultError,
    result_read,
    results_load,
    table_render,
)
from tests.stack import BASE_DIR

SCRIPT = BASE_DIR / "scripts" / "measurements_table.py"


def _script():
    spec = importlib.util.spec_from_file_location("measurements_table", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _result(tmp_path, name: str, stamp: str, figures: dict, **extra) -> None:
    result = {"name": name, "command": "x", "commit": "abc1234", "started": None,
              "machine": {"cores": 2, "load": None}, "figures": figures, **extra}  # fmt: skip
    (tmp_path / f"{name}-{stamp}.json").write_text(json.dumps(result))


def test_the_committed_table_is_what_the_committed_results_give(tmp_path):
    out = tmp_path / "README.md"
    assert _script().main(["--results", str(RESULTS_DIR), "--out", str(out)]) == 0
    assert out.read_text() == TABLE_PATH.read_text(), (
        "docs/measurements/README.md is stale: run .venv/bin/python scripts/measurements_table.py"
    )


def test_every_committed_result_file_reads_and_the_table_has_a_row_per_name():
    by_name = results_load(RESULTS_DIR)
    assert by_name, "no result files in docs/measurements/results/"
    table = TABLE_PATH.read_text()
    for name in by_name:
        assert f"| `{name}` |" in table


def test_a_malformed_result_file_is_refused_with_its_file_named(tmp_path, capsys):
    _result(tmp_path, "good", "20261205T000000Z", {"x": 1})
    broken = tmp_path / "broken-20261205T000000Z.json"
    broken.write_text('{"name": "broken", "figures": {')
    status = _script().main(["--results", str(tmp_path), "--out", str(tmp_path / "t.md")])
    assert status == 2
    err = capsys.readouterr().err
    assert str(broken) in err and "not a readable JSON result" in err
    assert "Traceback" not in err and not (tmp_path / "t.md").exists()


def test_a_result_missing_a_key_names_the_file_and_the_key(tmp_path):
    path = tmp_path / "soak-300-20261205T000000Z.json"
    path.write_text(json.dumps({"name": "soak-300", "command": "c", "figures": {}}))
    with pytest.raises(ResultError, match=r"soak-300-20261205T000000Z.json: missing commit, mach"):
        result_read(path)


def test_the_row_shows_the_latest_run_and_the_range_of_the_last_three(tmp_path):
    for i, p95 in enumerate([500.0, 40.0, 60.0, 50.0]):  # the first is out of the last three
        _result(tmp_path, "bench-lab-50", f"2026120{i + 1}T000000Z", {"p95_ms": p95, "d": {}})
    _result(tmp_path, "redis-rtt", "20261205T000000Z", {"p99_ms": [1.5, 2]}, goal="floor")
    table = table_render(results_load(tmp_path))
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert rows == [
        "| `bench-lab-50` | — | p95_ms 50 | p95_ms 40–60 | 4 | abc1234 | — | 2 cores |",
        "| `redis-rtt` | floor | p99_ms 1.5 / 2 | p99_ms 1.5–2 | 1 | abc1234 | — | 2 cores |",
    ]


def test_a_measurement_saves_the_agreed_keys_under_its_name_and_start_time(tmp_path):
    measurement = Measurement("bench-render", goal="g", argv=["scripts/bench_render.py", "-r"])
    path = measurement.save({"a_ms": 1.0}, out=tmp_path)
    assert re.fullmatch(r"bench-render-\d{8}T\d{6}Z\.json", path.name)
    result = result_read(path)
    assert set(result) == {"name", "command", "commit", "machine", "started", "goal", "figures"}
    assert result["command"].endswith("python scripts/bench_render.py -r")
    assert set(result["machine"]) == {"cores", "load"} and result["machine"]["cores"] >= 1
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", result["started"])
    assert re.fullmatch(r"[0-9a-f]{7,}(-dirty)?", result["commit"])
    with pytest.raises(FileExistsError):  # a result is never overwritten
        measurement.save({"a_ms": 2.0}, out=tmp_path)

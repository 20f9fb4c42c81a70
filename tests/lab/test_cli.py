"""`manage.py lab run|workers`: the command-line twin of the lab page."""

import json

import pytest

from tests.stack import manage

pytestmark = [pytest.mark.broker]


def test_lab_workers_lists_every_lanes_live_workers(lab_stack):
    report = json.loads(lab_stack.lab("workers", "--json").stdout)
    by_lane = {lane["lane"]: lane for lane in report}
    short = by_lane["redis-short"]
    assert short["available"]
    assert {w["name"] for w in short["workers"] if w["alive"]} == {"redis-short-1", "redis-short-2"}
    assert all(w["hostname"].startswith(w["name"] + "@") for w in short["workers"])


def test_lab_workers_says_why_a_lane_is_unavailable_and_how_to_get_it(lab_stack):
    out = manage("lab", "workers", TEACHLAB_RABBIT_URL="amqp://guest:guest@127.0.0.1:1//").stdout
    assert "rabbit-quorum  (UNAVAILABLE: RabbitMQ at 127.0.0.1:1" in out
    assert "apt install rabbitmq-server" in out
    assert "redis-short  (available)" in out


def test_lab_run_prints_each_receipt_then_the_summary(lab_stack):
    out = lab_stack.lab(
        "run", "--lane", "redis-short", "--countdown", "1", "--learner", "test-cli-text"
    ).stdout
    lines = out.splitlines()
    assert lines[0].startswith("run ") and "on redis-short: 1 task(s) published" in lines[0]
    assert lines[0].endswith("estimated about 1 delivery, 12 KB of worker memory, 1 s")
    receipts = [line for line in lines if line.split()[1:2] == ["received"]]
    assert len(receipts) == 1 and "copy 1" in receipts[0] and "redis-short-" in receipts[0]
    assert "done: tasks 1, receipts 1, executions 1, suppressed 0, duplicates 0" in out


def test_lab_run_json_summary_has_the_counts_and_copies_per_task(fired_runs):
    summary = fired_runs["short25"]
    for key in ("tasks", "receipts", "executions", "suppressed", "duplicates", "amplification"):
        assert key in summary
    task_id, row = next(iter(summary["per_task"].items()))
    assert len(task_id) == 36
    assert row["received"] == summary["receipts"] and row["executed"] == summary["executions"]


def test_lab_run_refuses_bad_input_with_a_clear_message_and_fires_nothing(lab_stack):
    result = lab_stack.lab(
        "run", "--lane", "redis-short", "--countdown", "-5", "--learner", "test-cli-bad",
        check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert "countdown cannot be less than 0; you gave -5" in result.stderr
    assert "Traceback" not in result.stderr


def test_lab_run_with_several_tasks_spaces_their_countdowns(lab_stack):
    summary = json.loads(
        lab_stack.lab(
            "run", "--lane", "redis-short", "--count", "3", "--countdown", "1", "--spacing", "1",
            "--json", "--learner", "test-cli-spacing",
        ).stdout
    )  # fmt: skip
    rows = sorted(summary["per_task"].values(), key=lambda r: r["index"])
    assert [r["executed"] for r in rows] == [1, 1, 1]
    # One second apart, the first 1 s after firing (less any publishing lag), none early.
    assert [round(b["due_t"] - a["due_t"]) for a, b in zip(rows, rows[1:], strict=False)] == [
        1,
        1,
    ], rows
    for row in rows:
        assert row["due_t"] - 0.05 <= row["started_t"][0] <= row["due_t"] + 1.5, rows


def test_lab_fidelity_counts_the_same_batch_on_the_lab_and_on_plain_celery(lab_stack, tmp_path):
    """The interface the fidelity goal is measured with: both sides run the whole batch, waits
    past one timeout give copies on both, and the ratio is lab over control. Its result files
    (one per goal) go where --out says."""
    proc = lab_stack.lab(
        "fidelity", "--count", "10", "--countdown", "8", "--spacing", "0.4", "--json",
        "--out", str(tmp_path), timeout=240,
    )  # fmt: skip
    result = json.loads(proc.stdout)
    (saved,) = tmp_path.glob("lab-fidelity-*.json")
    assert json.loads(saved.read_text())["figures"]["ratio"] == result["ratio"]
    (handlers,) = tmp_path.glob("handler-overhead-*.json")
    assert json.loads(handlers.read_text())["figures"]["detail"]["workers"] == 2
    assert set(result) >= {"lab", "control", "ratio", "handler_ms"}
    for side in ("lab", "control"):
        assert set(result[side]) == {"tasks", "executions", "amplification"}
        assert result[side]["tasks"] == 10
        # Waits of 8 to 11.6 s on a 10 s timeout: the later tasks are handed out twice.
        assert 10 < result[side]["executions"] <= 20, result
    lab, control = result["lab"]["executions"], result["control"]["executions"]
    assert result["ratio"] == round(lab / control, 3)
    assert set(result["handler_ms"]) == {"redis-short-1", "redis-short-2"}
    assert all(stats["n"] > 0 for stats in result["handler_ms"].values())
    # The consumer's handler (task_received) on its own: one call per delivery, of this
    # batch only, and fewer than all handler calls (each run adds started and finished).
    workers = result["handler_ms"].values()
    assert sum(stats["received"]["n"] for stats in workers) >= 10
    assert all(stats["received"]["n"] < stats["n"] for stats in workers)

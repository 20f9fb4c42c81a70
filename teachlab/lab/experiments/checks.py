"""Expected observations as data, evaluated on a run's events.

A check names a metric (metrics.py), whether it holds for the run's totals (`per: run`) or for
every task (`per: task`), and a bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal

from teachlab.lab.experiments.metrics import Observation, run_metric, task_metric

PER = ("run", "task")
BOUNDS = {
    "at_least": (">=", lambda v, b: v >= b),
    "at_most": ("<=", lambda v, b: v <= b),
    "equals": ("=", lambda v, b: v == b),
    "more_than": (">", lambda v, b: v > b),
    "less_than": ("<", lambda v, b: v < b),
    "between": ("in", lambda v, b: b[0] <= v <= b[1]),
}


@dataclass(frozen=True)
class CheckResult:
    says: str
    run: str
    passed: bool
    expected: str
    observed: str
    values: tuple = ()
    id: str = ""  # the check's `id` in the file: what a lesson's evidence cites

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "says": self.says,
            "run": self.run,
            "passed": self.passed,
            "expected": self.expected,
            "observed": self.observed,
        }


def bound_value(*, bound: object, observations: Mapping[str, Observation]):
    """A bound is a number, [low, high] for `between`, or another run's metric:
    {run: NAME, what: METRIC, times: N, plus: N}."""
    if isinstance(bound, list | tuple):
        return (float(bound[0]), float(bound[1]))
    if isinstance(bound, Mapping):
        value = run_metric(observation=observations[bound["run"]], what=bound["what"])
        if value is None:
            return None
        return value * float(bound.get("times", 1)) + float(bound.get("plus", 0))
    return float(bound)


def describe_bound(bound: object) -> str:
    if isinstance(bound, list | tuple):
        return f"[{_fmt(float(bound[0]))}, {_fmt(float(bound[1]))}]"
    if isinstance(bound, Mapping):
        text = f"{bound['what']} of run '{bound['run']}'"
        if bound.get("times", 1) != 1:
            text = f"{bound['times']} × {text}"
        plus = bound.get("plus", 0)
        if plus > 0:
            text += f" + {plus}"
        elif plus < 0:
            text += f" − {-plus}"
        return text
    return _fmt(float(bound))


def _fmt(value: float | None) -> str:
    if value is None:
        return "never"
    # Two places at most, no trailing zeros: 2.5, 2.35, 100, and 2 for 1.999 (not "2.").
    text = format(Decimal(f"{value:.2f}").normalize(), "f")
    return "0" if text == "-0" else text


def check_evaluate(*, check: Mapping, observations: Mapping[str, Observation]) -> CheckResult:
    """One check against the observed runs; every task must pass a `per: task` check."""
    result = _check_evaluate(check=check, observations=observations)
    return replace(result, id=str(check.get("id", "")))


def _check_evaluate(*, check: Mapping, observations: Mapping[str, Observation]) -> CheckResult:
    run = check["run"]
    what = check["what"]
    op_name = next(name for name in BOUNDS if name in check)
    symbol, test = BOUNDS[op_name]
    bound = bound_value(bound=check[op_name], observations=observations)
    expected = f"{what} {symbol} {describe_bound(check[op_name])}"
    per_task = check.get("per") == "task"  # `per: run` is the default
    if per_task:
        expected = f"every task: {expected}"
    says = check.get("says") or expected
    observation = observations[run]
    if bound is None:
        return CheckResult(says, run, False, expected, "the reference value was never observed")
    if per_task:
        values = task_metric(observation=observation, what=what)
        if not values:
            return CheckResult(says, run, False, expected, "no tasks were fired")
        passed = all(v is not None and test(v, bound) for v in values.values())
        return CheckResult(
            says,
            run,
            passed,
            expected,
            _describe_values(list(values.values())),
            tuple(values.values()),
        )
    value = run_metric(observation=observation, what=what)
    passed = value is not None and test(value, bound)
    return CheckResult(says, run, passed, expected, _fmt(value), (value,))


def _describe_values(values: list[float | None]) -> str:
    if len(values) <= 4:
        return ", ".join(_fmt(v) for v in values)
    known = [v for v in values if v is not None]
    never = len(values) - len(known)
    text = f"{_fmt(min(known))}–{_fmt(max(known))} over {len(values)} tasks" if known else ""
    if never:
        text = f"{text}; never for {never}" if text else f"never for all {never} tasks"
    return text

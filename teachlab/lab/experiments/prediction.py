"""The learner's prediction: read from a form or the CLI, then set beside what the runs showed."""

from __future__ import annotations

from teachlab.lab.experiments.catalog import Experiment
from teachlab.lab.experiments.checks import check_evaluate
from teachlab.lab.experiments.metrics import run_metric


def _close(predicted: float, observed: float) -> bool:
    """Counts must be right; a ratio such as the amplification within a fifth counts."""
    if float(observed).is_integer():
        return abs(predicted - observed) < 0.5
    return abs(predicted - observed) <= 0.2 * abs(observed)


def prediction_verdict(*, experiment: Experiment, observations: dict, value) -> dict:
    """What the learner predicted beside what happened, and whether they match."""
    prediction = experiment.prediction
    if prediction["kind"] == "number":
        observe = prediction["observe"]
        observed = run_metric(observation=observations[observe["run"]], what=observe["what"])
        matched = value is not None and observed is not None and _close(float(value), observed)
        return {
            "kind": "number",
            "prompt": prediction["prompt"],
            "value": value,
            "observed": observed,
            "observed_label": "never" if observed is None else f"{observed:g}",
            "unit": prediction.get("unit", ""),
            "matched": matched,
        }
    return choice_verdict(
        prompt=prediction["prompt"],
        choices=prediction["choices"],
        observations=observations,
        value=value,
    )


def choice_verdict(*, prompt: str, choices: list[dict], observations: dict, value) -> dict:
    """The learner's choice beside the first choice whose condition the runs meet."""
    observed_choice = None
    for choice in choices:
        if check_evaluate(check=choice["when"], observations=observations).passed:
            observed_choice = choice
            break
    labels = {c["id"]: c["label"] for c in choices}
    return {
        "kind": "choice",
        "prompt": prompt,
        "value": value,
        "value_label": labels.get(value, ""),
        "observed": observed_choice["id"] if observed_choice else None,
        "observed_label": observed_choice["label"] if observed_choice else "none of the choices",
        "matched": value is not None
        and observed_choice is not None
        and value == observed_choice["id"],
    }


def timing_parse(*, experiment: Experiment, raw) -> str | None:
    """The learner's answer to the timing question, when the experiment asks one."""
    timing = experiment.prediction.get("timing")
    if not timing:
        return None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise ValueError("Say when you expect it to happen too: pick one of the timings.")
    if raw not in [c["id"] for c in timing["choices"]]:
        raise ValueError("Pick one of the timings offered.")
    return raw


def prediction_parse(*, experiment: Experiment, raw) -> float | str | None:
    """The learner's prediction from a form or CLI; ValueError with a message when it is bad."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    prediction = experiment.prediction
    if prediction["kind"] == "number":
        try:
            number = float(str(raw).strip())
        except ValueError:
            raise ValueError(
                f"Your prediction must be a number; {str(raw)[:40]!r} is not."
            ) from None
        if not 0 <= number <= 100_000:
            raise ValueError("Your prediction must be between 0 and 100,000.")
        return int(number) if number.is_integer() else number
    ids = [c["id"] for c in prediction["choices"]]
    if raw not in ids:
        raise ValueError("Pick one of the choices offered.")
    return raw

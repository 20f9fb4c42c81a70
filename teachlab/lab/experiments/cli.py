"""`python manage.py lab experiment NAME [--json]` and `--all`: the headless twin of the
experiment page, through the same runner. Exits non-zero when any check fails."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from teachlab.lab.experiments.batch import experiments_run_many
from teachlab.lab.experiments.catalog import CatalogError, experiments_load
from teachlab.lab.experiments.prediction import prediction_parse
from teachlab.lab.experiments.runner import experiment_execute

CLI_LEARNER_KEY = "lab-experiment-cli"


def parser_add(subparsers) -> None:
    """Add the `experiment` subcommand to the lab command's argparse subparsers."""
    sub = subparsers.add_parser(
        "experiment", help="run guided experiments headless and check them on the real broker"
    )
    sub.add_argument("names", nargs="*", metavar="NAME", help="experiment slug(s)")
    sub.add_argument("--all", action="store_true", help="run every experiment and print a table")
    sub.add_argument("--list", action="store_true", help="list the experiments and exit")
    sub.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    sub.add_argument("--predict", help="your prediction (a number or a choice id), one experiment")


def _learner():
    from lessons.models import Learner

    learner, _ = Learner.objects.get_or_create(key=CLI_LEARNER_KEY)
    return learner


def _line(result: dict) -> str:
    mark = "PASS" if result["passed"] else "FAIL"
    checks = result["checks"]
    passed = sum(1 for c in checks if c["passed"])
    return (
        f"{mark}  {result['slug']:<26} {passed}/{len(checks)} checks  {result['seconds']:>6.1f} s"
    )


def _details(result: dict, out: TextIO) -> None:
    for check in result["checks"]:
        mark = "ok  " if check["passed"] else "FAIL"
        out.write(f"    {mark} [{check['run']}] {check['says']}\n")
        out.write(f"         expected {check['expected']}; observed {check['observed']}\n")
    for error in result["errors"]:
        out.write(f"    error: {error}\n")
    prediction = result.get("prediction") or {}
    if prediction.get("value") is not None:
        verdict = "matched" if prediction.get("matched") else "did not match"
        out.write(
            f"    your prediction {prediction['value']} {verdict} what happened: "
            f"{prediction.get('observed_label')}\n"
        )


def _listing(experiment) -> dict:
    """One row of `--list --json`: what the text listing shows, plus the title."""
    return {
        "order": experiment.order,
        "slug": experiment.slug,
        "title": experiment.title,
        "seconds": round(experiment.seconds, 1),
        "lanes": experiment.lanes,
    }


def _refuse(out: TextIO, as_json: bool, message: str, **extra) -> int:
    """Say why nothing ran (as {"error": ...} under --json, so the output still parses); exit 2."""
    if as_json:
        out.write(json.dumps({"error": message, **extra}, indent=2) + "\n")
    else:
        out.write(message + "\n")
    return 2


def _list(catalog: list, as_json: bool, out: TextIO) -> int:
    if as_json:
        out.write(json.dumps([_listing(e) for e in catalog], indent=2) + "\n")
        return 0
    for e in catalog:
        out.write(f"{e.order:>2}. {e.slug:<26} ~{e.seconds:>4.0f} s  {', '.join(e.lanes)}\n")
    return 0


def _run(chosen: list, value, as_json: bool, out: TextIO) -> list[dict]:
    """One experiment alone (with the learner's prediction), several overlapped."""
    learner = _learner()

    def progress(slug: str, text: str) -> None:
        if not as_json:
            out.write(f"  [{slug}] {text}\n")
            out.flush()

    if len(chosen) == 1:
        return [
            experiment_execute(
                experiment=chosen[0],
                learner=learner,
                prediction=value,
                progress=lambda text: progress(chosen[0].slug, text),
            )
        ]
    return experiments_run_many(experiments=chosen, learner=learner, on_progress=progress)


def _report(results: list[dict], run_all: bool, as_json: bool, out: TextIO) -> int:
    if as_json:
        payload = results[0] if len(results) == 1 and not run_all else results
        out.write(json.dumps(payload, indent=2, default=str) + "\n")
    else:
        out.write("\n")
        for result in results:
            out.write(_line(result) + "\n")
            if not result["passed"] or len(results) == 1:
                _details(result, out)
        failed = sum(1 for r in results if not r["passed"])
        out.write(f"\n{len(results) - failed} of {len(results)} experiments passed.\n")
    return 0 if all(r["passed"] for r in results) else 1


def experiment_command(
    *,
    names: list[str],
    run_all: bool = False,
    list_only: bool = False,
    as_json: bool = False,
    predict: str | None = None,
    out: TextIO = sys.stdout,
) -> int:
    """Returns the exit status: 0 when every check of every experiment passed."""
    try:
        catalog = experiments_load(strict=True)
    except CatalogError as exc:
        return _refuse(out, as_json, f"The experiment files have problems:\n{exc}")
    by_slug = {e.slug: e for e in catalog}
    if list_only:
        return _list(catalog, as_json, out)
    unknown = [n for n in names if n not in by_slug]
    if unknown or (not names and not run_all):
        said = f"No experiment called {', '.join(unknown)}.\n" if unknown else ""
        return _refuse(
            out,
            as_json,
            f"{said}Pick from: {', '.join(by_slug)} (or --all).",
            choices=list(by_slug),
        )
    chosen = catalog if run_all else [by_slug[n] for n in names]
    value = None
    if len(chosen) == 1 and predict is not None:
        try:
            value = prediction_parse(experiment=chosen[0], raw=predict)
        except ValueError as exc:
            return _refuse(out, as_json, str(exc))
    return _report(_run(chosen, value, as_json, out), run_all, as_json, out)

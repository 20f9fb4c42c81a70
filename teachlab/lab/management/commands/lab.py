"""`manage.py lab run|workers|monitor`: the lab from a shell, through the same services."""

from __future__ import annotations

import json
import sys
import time

from django.core.management.base import BaseCommand, CommandError

from teachlab.core.measurements import Measurement, out_option_add
from teachlab.lab.runs.errors import LabError
from teachlab.lab.runs.params import PARAMS

CLI_LEARNER_KEY = "cli"


def _learner(key: str):
    from lessons.models import Learner

    learner, _ = Learner.objects.get_or_create(key=key)
    return learner


class Command(BaseCommand):
    help = "Fire a lab run and follow it, list the lab's workers, or run the lab monitor."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        run = sub.add_parser("run", help="fire a run, print each receipt, then a summary")
        run.add_argument("--lane", default="redis-short")
        for param in PARAMS.values():  # the run-parameter schema checks every value
            if param.kind == "flag":
                run.add_argument(param.option, action="store_true", help=param.help)
            else:
                run.add_argument(param.option, help=param.help or param.label)
        run.add_argument("--prediction")
        run.add_argument("--label", default="cli")
        run.add_argument("--learner", default=CLI_LEARNER_KEY, help="learner key to fire as")
        run.add_argument("--timeout", type=float, help="stop following after this many seconds")
        run.add_argument("--json", action="store_true", help="print only the summary, as JSON")
        workers = sub.add_parser("workers", help="list each lane's workers")
        workers.add_argument("--json", action="store_true", help="print the lanes as JSON")
        tail = sub.add_parser("tail", help="print a run's events as they come, from its log")
        tail.add_argument("run")
        tail.add_argument("--timeout", type=float, help="stop after this many seconds")
        tail.add_argument("--json", action="store_true", help="print the events as one JSON object")
        monitor = sub.add_parser(
            "monitor", help="record events; publish broker snapshots; settle runs"
        )
        monitor.add_argument("--interval", type=float, default=0.5)
        sub.add_parser("record", help="only record events from the runs' logs (the recorder)")
        fidelity = sub.add_parser(
            "fidelity", help="the same paced batch on redis-short and on its plain-Celery control"
        )
        fidelity.add_argument("--count", type=int, default=1500)
        fidelity.add_argument("--spacing", type=float, default=0.04, help="seconds between tasks")
        fidelity.add_argument("--countdown", type=float, default=0, help="task 0's countdown")
        fidelity.add_argument("--json", action="store_true", help="print the result as JSON")
        out_option_add(fidelity)  # the JSON result files: docs/measurements/results/
        from teachlab.lab.experiments.cli import parser_add

        parser_add(sub)  # `lab experiment NAME|--all`: lab/experiments/cli.py
        from teachlab.lab.matrix.cli import parser_add as matrix_parser_add

        matrix_parser_add(sub)  # `lab matrix`: lab/matrix/cli.py

    def handle(self, *args, **options):
        try:
            getattr(self, f"handle_{options['action']}")(options)
        except LabError as exc:
            raise CommandError(str(exc)) from exc

    # --- run -------------------------------------------------------------------------------

    def handle_run(self, options):
        from teachlab.lab.runs.costs import run_estimate
        from teachlab.lab.runs.firing import run_fire
        from teachlab.lab.runs.lanes import lane_get
        from teachlab.lab.runs.reading import run_summary

        params = {name: options[name] for name in PARAMS}
        run = run_fire(
            learner=_learner(options["learner"]),
            lane=options["lane"],
            params=params,
            prediction=options["prediction"],
            label=options["label"],
        )
        out = sys.stderr if options["json"] else self.stdout
        estimate = run_estimate(run, lane_get(run.lane)).text
        out.write(
            f"run {run.id} on {run.lane}: {len(run.task_ids)} task(s) published; "
            f"estimated {estimate}\n"
        )
        stop_at = time.time() + (options["timeout"] or max(5.0, run.deadline - time.time()))
        finished = self._follow(
            run, emit=self._printer(out), receipts_only=options["json"], stop_at=stop_at
        )
        if not finished:
            out.write("timed out before every task settled\n")
        run.refresh_from_db()
        summary = {**run_summary(run), "versions": run.versions}
        if options["json"]:
            self.stdout.write(json.dumps(summary, indent=2))
        else:
            self.stdout.write(self._summary_text(summary))

    def _printer(self, out):
        def emit(event: dict) -> None:
            out.write(self._line(event) + "\n")
            out.flush()

        return emit

    def _follow(self, run, *, emit, receipts_only: bool, stop_at: float, settle: bool = True):
        """Hand the run's events from its log to `emit` as they come, until its end marker
        (True) or `stop_at` (False). Settles the run itself too, in case no monitor runs."""
        from teachlab.lab.eventlog.labevent import DONE
        from teachlab.lab.eventlog.settle import run_settle
        from teachlab.lab.eventlog.stream import stream_read
        from teachlab.lab.models import Kind

        last, next_settle = "0-0", 0.0
        while time.time() < stop_at:
            for event in stream_read(run.id, after=last, block=250):
                last = event["id"]
                if event["kind"] == DONE:
                    return True
                if event["kind"] == Kind.RECEIVED or not receipts_only:
                    emit(event)
            if settle and time.time() >= next_settle:
                run.refresh_from_db()
                run_settle(run)
                next_settle = time.time() + 0.5
        return False

    def handle_tail(self, options):
        """Print a run's events as they come (from the start), until it settles. With --json,
        one JSON object at the end: the run, whether it settled, and its events."""
        from teachlab.lab.models import Run

        run = Run.objects.filter(pk=options["run"]).first()
        if run is None:
            raise CommandError(f"There is no run {options['run']!r}.")
        stop_at = time.time() + (options["timeout"] or 24 * 3600)
        events: list[dict] = []
        emit = events.append if options["json"] else self._printer(self.stdout)
        settled = self._follow(run, emit=emit, receipts_only=False, stop_at=stop_at, settle=False)
        if options["json"]:
            self.stdout.write(
                json.dumps({"run": str(run.pk), "settled": settled, "events": events})
            )
        elif not settled:
            self.stdout.write("stopped before the run settled\n")

    @staticmethod
    def _line(event: dict) -> str:
        again = " redelivered" if event["redelivered"] else ""
        return (
            f"{event['t']:8.2f}s  {event['kind']:<10} task {event['index']:<4} "
            f"{event['task_id'][:8]}  copy {event['copy']}  {event['worker']}{again}"
        )

    @staticmethod
    def _summary_text(summary: dict) -> str:
        lines = [
            f"\n{summary['status']}: tasks {summary['tasks']}, receipts {summary['receipts']}, "
            f"executions {summary['executions']}, suppressed {summary['suppressed']}, "
            f"duplicates {summary['duplicates']}, amplification {summary['amplification']}",
        ]
        if summary["prediction"] is not None:
            lines.append(f"you predicted {summary['prediction']} receipts")
        shown = list(summary["per_task"].items())[:20]
        for task_id, row in shown:
            lines.append(
                f"  task {row['index']:<4} {task_id[:8]}  received {row['received']}  "
                f"executed {row['executed']}  suppressed {row['suppressed']}"
            )
        if len(summary["per_task"]) > len(shown):
            lines.append(f"  … and {len(summary['per_task']) - len(shown)} more tasks")
        return "\n".join(lines) + "\n"

    # --- workers ------------------------------------------------------------------------------

    def handle_workers(self, options):
        from teachlab.lab.runs.lanes import lane_status, lanes
        from teachlab.lab.worker.workers import workers_list

        found = workers_list()
        report = []
        for lane in lanes():
            status = lane_status(lane)
            report.append(
                {
                    "lane": lane.name,
                    "available": status.available,
                    "reason": status.reason,
                    "how_to_get": status.how_to_get,
                    "workers": [w for w in found if w["lane"] == lane.name],
                }
            )
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        for lane in report:
            state = "available" if lane["available"] else f"UNAVAILABLE: {lane['reason']}"
            self.stdout.write(f"{lane['lane']}  ({state})\n")
            if not lane["available"]:
                self.stdout.write(f"    to get it: {lane['how_to_get']}\n")
            for w in lane["workers"]:
                alive = "alive" if w["alive"] else w["state"] or "gone"
                self.stdout.write(
                    f"    {w['hostname'] or w['name']:<32} {alive:<10} pid {w['pid']}  "
                    f"holds {w['held']}  running {w['running']}\n"
                )
            if not lane["workers"]:
                self.stdout.write("    no workers seen\n")

    # --- experiment ---------------------------------------------------------------------------

    def handle_experiment(self, options):
        from teachlab.lab.experiments.cli import experiment_command

        status = experiment_command(
            names=options["names"],
            run_all=options["all"],
            list_only=options["list"],
            as_json=options["json"],
            predict=options["predict"],
            out=self.stdout,
        )
        if status:
            raise CommandError("some experiment checks failed", returncode=status)

    def handle_matrix(self, options):
        from teachlab.lab.matrix.cli import matrix_command

        status = matrix_command(
            celery=options["celery"],
            redis=options["redis"],
            slugs=options["experiment"],
            as_json=options["json"],
            out=self.stdout,
            err=self.stderr,
        )
        if status:
            raise CommandError("some combinations could not run", returncode=status)

    # --- monitor -------------------------------------------------------------------------------

    def handle_monitor(self, options):
        from teachlab.lab.eventlog.monitor import monitor_loop, monitor_process_setup

        monitor_process_setup()
        monitor_loop(interval=options["interval"])

    def handle_fidelity(self, options):
        from teachlab.lab.runs.fidelity import (
            FIDELITY_GOAL,
            HANDLER_GOAL,
            fidelity_measure,
            fidelity_results,
        )

        measurement = Measurement("lab-fidelity", goal=FIDELITY_GOAL)
        result = fidelity_measure(
            count=options["count"],
            countdown=options["countdown"],
            spacing=options["spacing"],
            learner=_learner("cli-fidelity"),
            progress=sys.stderr,
        )
        goals = {"lab-fidelity": FIDELITY_GOAL, "handler-overhead": HANDLER_GOAL}
        for name, figures in fidelity_results(result).items():
            saved = measurement.save(figures, out=options["out"], name=name, goal=goals[name])
            sys.stderr.write(f"result: {saved}\n")
        if options["json"]:
            self.stdout.write(json.dumps(result))
            return
        for side in ("lab", "control"):
            r = result[side]
            self.stdout.write(
                f"{side:<8} tasks {r['tasks']}  executions {r['executions']}  "
                f"amplification {r['amplification']}\n"
            )
        self.stdout.write(f"ratio (lab / control amplification): {result['ratio']}\n")

    def handle_record(self, options):
        from teachlab.lab.eventlog.recorder import recorder_loop

        recorder_loop()

"""One run of an experiment while its steps play: its spec, the fired run, its step log."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from teachlab.lab.models import Run
from teachlab.lab.runs.errors import LabError

Progress = Callable[[str], None]


@dataclass
class ExperimentRun:
    """The spec, the fired run and what happened; threads of one experiment share these."""

    spec: dict
    label: str = ""  # "Run “crash”: " when the experiment has several runs; "" otherwise
    run: Run | None = None
    errors: list[str] = field(default_factory=list)
    log: list[tuple[float, str]] = field(default_factory=list)
    finished: threading.Event = field(default_factory=threading.Event)
    stop_feeding: threading.Event = field(default_factory=threading.Event)
    paused: list = field(default_factory=list)  # worker processes a `pause` step froze
    # what the memory steps saw on the broker (`fill: memory`), for the run's metrics
    broker: dict = field(default_factory=dict)
    started: float = field(default_factory=time.time)  # the experiment's start, for the log
    progress: Progress | None = None

    def say(self, text: str) -> None:
        """Log a step in the learner's words, and pass it on to whoever follows the run."""
        self.log.append((round(time.time() - self.started, 1), text))
        if self.progress is not None:
            self.progress(f"{self.label}{text}")


class StepFailed(LabError):
    """A step could not be carried out (no worker held the task, broker away, …)."""

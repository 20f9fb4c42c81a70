"""Run parameters: the one schema the lab form, `lab run`, workshop rooms and experiment files
read, so a value is accepted or refused with the same words wherever it is typed.

Two kinds of bound live here. Each field's own range (`Param.low`/`high`) catches typos and
absurd values (`LabInputError`). The per-learner limits from settings (`LAB_MAX_TASKS_PER_RUN`,
`LAB_MAX_COUNTDOWN`) say what this server lets one run ask for (`LabLimitError`); run_fire
applies them to learners, a workshop room to the instructor's run. Limits on the learner
rather than the run (runs at once, runs per minute) are in limits.py.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings

from teachlab.lab.runs.errors import LabInputError, LabLimitError

SANE_SECONDS = 7 * 24 * 3600  # beyond any limit a server would set: a typo, not a choice
MAX_DURATION = 600
MAX_PREDICTION = 10_000_000


@dataclass(frozen=True)
class Param:
    """One run parameter: its type, default, sane range and how forms and the CLI show it."""

    name: str
    kind: str  # "int" | "float" | "flag" | "moment"
    default: Any
    label: str
    low: float = 0.0
    high: float = SANE_SECONDS
    help: str = ""

    @property
    def types(self) -> tuple[type, ...]:
        """Python types a value written in a data file (YAML) may have."""
        return {"int": (int,), "float": (int, float), "flag": (bool,)}.get(
            self.kind, (str, int, float)
        )

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")


PARAMS: dict[str, Param] = {
    p.name: p
    for p in (
        Param("count", "int", 1, "How many tasks", low=1, high=1_000_000),
        Param(
            "countdown",
            "float",
            0.0,
            "Countdown (s)",
            help="Seconds until the first task is due. Leave empty when you give an ETA.",
        ),
        Param("eta", "moment", None, "or ETA (UTC)", help="A moment instead of a countdown."),
        Param(
            "spacing",
            "float",
            0.0,
            "Spacing (s)",
            high=24 * 3600,
            help="Added to each next task's countdown.",
        ),
        Param(
            "expires",
            "float",
            None,
            "Expires after (s)",
            low=0.001,
            help="A task not started by then is revoked. Empty: never.",
        ),
        Param(
            "duration",
            "float",
            0.0,
            "Body takes (s)",
            high=MAX_DURATION,
            help="How long each task's body sleeps once it starts, standing in for real work.",
        ),
        Param(
            "acks_late",
            "flag",
            False,
            "acks_late",
            help="Acknowledge the message when the body ends, not just before it starts. A "
            "waiting countdown is unacknowledged either way; acks_late adds the body's time.",
        ),
        Param(
            "guard",
            "flag",
            False,
            "Idempotency guard",
            help="Claim the work with SET NX before running it; later copies are skipped.",
        ),
        Param("guard_ttl", "int", 600, "Guard expiry (s)", low=1, high=SANE_SECONDS),
        Param("fail", "int", 0, "Body fails (times)", high=20, help="The body fails this often."),
        Param("retry", "flag", False, "Retry after a failure", help="Needs fail."),
        Param("retry_delay", "float", 1.0, "Retry delay (s)", high=3600),
        # Prefork lanes only: the body's process dies (SIGKILL, as the OOM killer would) this
        # many times, under a parent that lives on and settles the message (WorkerLostError).
        Param(
            "die",
            "int",
            0,
            "Pool child dies (times)",
            high=20,
            help="Prefork lanes only: the child running the body is killed this often.",
        ),
        Param(
            "reject_on_worker_lost",
            "flag",
            False,
            "task_reject_on_worker_lost",
            help="With acks_late: a dead child's message goes back to the queue.",
        ),
        Param(
            "retry_on_worker_lost",
            "flag",
            False,
            "task_retry_on_worker_lost",
            help="A dead child's task is retried (max_retries 3, default_retry_delay 1 s here).",
        ),
    )
}


@dataclass(frozen=True)
class RunParams:
    count: int = 1
    countdown: float = 0.0
    eta: float | None = None  # epoch seconds; instead of countdown
    spacing: float = 0.0
    expires: float | None = None
    duration: float = 0.0
    acks_late: bool = False
    guard: bool = False
    guard_ttl: int = 600
    fail: int = 0
    retry: bool = False
    retry_delay: float = 1.0
    die: int = 0
    reject_on_worker_lost: bool = False
    retry_on_worker_lost: bool = False

    def due_in(self, index: int, *, now: float) -> float:
        """Seconds from `now` until task `index` is due."""
        first = (self.eta - now) if self.eta is not None else self.countdown
        return max(0.0, first) + index * self.spacing

    def as_dict(self) -> dict:
        return asdict(self)


class ParamsInvalid(LabInputError):
    """Every bad field at once, so a form can show each beside its field. `errors` maps a
    field name (None: the parameters as a whole) to its message; str() joins them."""

    def __init__(self, errors: dict[str | None, str]):
        self.errors = errors
        super().__init__(" ".join(errors.values()))


# --- one value --------------------------------------------------------------------------------


def _blank(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _number(p: Param, value) -> float | int:
    if isinstance(value, bool):
        raise LabInputError(f"{p.name} must be a number, not {value}.")
    try:
        number = float(str(value).strip()) if not isinstance(value, int | float) else float(value)
    except ValueError:
        raise LabInputError(f"{p.name} must be a number; {value!r} is not one.") from None
    if not math.isfinite(number):
        raise LabInputError(f"{p.name} must be a finite number.")
    if p.kind == "int" and number != int(number):
        raise LabInputError(f"{p.name} must be a whole number; {value!r} is not.")
    if number < p.low:
        raise LabInputError(f"{p.name} cannot be less than {p.low:g}; you gave {number:g}.")
    if number > p.high:
        raise LabInputError(
            f"{p.name} of {number:g} is far beyond anything the lab can run (at most {p.high:g})."
        )
    return int(number) if p.kind == "int" else number


def _flag(p: Param, value) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "on", "yes"}:
        return True
    if text in {"0", "false", "off", "no"}:
        return False
    raise LabInputError(f"{p.name} must be on or off; {value!r} is neither.")


def _moment(p: Param, value, *, now: float) -> float:
    try:
        if isinstance(value, datetime):
            epoch = (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
        elif isinstance(value, int | float) and not isinstance(value, bool):
            epoch = float(value)
        else:
            moment = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
            epoch = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    except (ValueError, OverflowError):
        raise LabInputError(
            f"{p.name} must be a date and time such as 2026-12-02T10:30:00Z; {value!r} is not."
        ) from None
    if epoch < now - 60:
        raise LabInputError(f"{p.name} is in the past; pick a moment after now.")
    if epoch > now + SANE_SECONDS:
        raise LabInputError(f"{p.name} is more than a week away; the lab cannot wait that long.")
    return epoch


def param_parse(name: str, value, *, now: float | None = None):
    """One parameter from a form field, JSON, YAML or a CLI option; blank gives the default.
    Raises LabInputError with the message every entry point shows."""
    p = PARAMS[name]
    if _blank(value):
        return p.default
    if p.kind == "flag":
        return _flag(p, value)
    if p.kind == "moment":
        return _moment(p, value, now=time.time() if now is None else now)
    return _number(p, value)


# --- a whole run ------------------------------------------------------------------------------


def params_parse(raw: dict, *, now: float | None = None) -> RunParams:
    """Form fields, JSON, YAML or CLI options to RunParams. Raises ParamsInvalid naming every
    bad field (a LabInputError)."""
    now = time.time() if now is None else now
    errors: dict[str | None, str] = {}
    unknown = sorted(set(raw) - set(PARAMS))
    if unknown:
        errors[None] = f"Unknown run parameter(s): {', '.join(unknown)}."
    values: dict[str, Any] = {}
    for name in PARAMS:
        try:
            values[name] = param_parse(name, raw.get(name), now=now)
        except LabInputError as exc:
            errors[name] = str(exc)
    if (
        not _blank(raw.get("eta"))
        and not _blank(raw.get("countdown"))
        and values.get("countdown", 1)
    ):
        errors.setdefault(None, "Give a countdown or an ETA, not both.")
    if values.get("retry") and not values.get("fail") and "fail" not in errors:
        errors["retry"] = "retry only matters with fail: set how many times the body fails."
    if errors:
        raise ParamsInvalid(errors)
    return RunParams(**values)


def prediction_parse(value) -> int | None:
    """A learner's guess of the receipts: a whole number, or nothing."""
    if _blank(value):
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        raise LabInputError(
            f"A prediction is a whole number of receipts; {value!r} is not."
        ) from None
    if not 0 <= number <= MAX_PREDICTION:
        raise LabInputError("A prediction must be between 0 and 10,000,000 receipts.")
    return number


# --- what this server allows one run ---------------------------------------------------------


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"


def params_over_limits(p: RunParams, *, now: float | None = None) -> dict[str, str]:
    """Field name -> message for each per-learner limit (settings) the run goes past."""
    now = time.time() if now is None else now
    over = {}
    most = settings.LAB_MAX_TASKS_PER_RUN
    if p.count > most:
        over["count"] = (
            f"A run may have at most {most} tasks; you asked for {p.count}. Fire a smaller batch."
        )
    longest, last_due = settings.LAB_MAX_COUNTDOWN, p.due_in(p.count - 1, now=now)
    if last_due > longest:
        over["eta" if p.eta is not None else "countdown"] = (
            f"The last task would be due {_duration(last_due)} after firing; the lab "
            f"allows at most {_duration(longest)}. Shorten the countdown or the spacing."
        )
    return over


def params_limits_check(p: RunParams, *, now: float | None = None) -> None:
    """Raise LabLimitError naming the limit and the value asked for."""
    over = params_over_limits(p, now=now)
    if over:
        raise LabLimitError(" ".join(over.values()))


def params_bounds() -> dict[str, dict[str, float]]:
    """min/max for number inputs in the browser (hints; the server decides)."""
    bounds = {
        name: {"min": p.low, "max": p.high}
        for name, p in PARAMS.items()
        if p.kind in {"int", "float"}
    }
    bounds["count"]["max"] = settings.LAB_MAX_TASKS_PER_RUN
    bounds["countdown"]["max"] = settings.LAB_MAX_COUNTDOWN
    return {name: {k: f"{v:g}" for k, v in b.items()} for name, b in bounds.items()}

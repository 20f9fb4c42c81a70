"""The progress file (`teachlab-progress/1`): what the lab part of an export holds, and the
checks an uploaded file must pass before anything of it is merged (lessons/progress_import.py).

One pydantic model per record, so the upload's messages name the record and field that is
wrong ("quiz_attempts[0].answers[2].correct: expected true or false, found 'yes'"), in the
same wording the lesson validator uses (lessons/yamlschema.py).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Annotated, Any, ClassVar

from django.conf import settings
from pydantic import (
    AfterValidator,
    AwareDatetime,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    model_validator,
)

from lessons.schema import TIERS
from lessons.yamlschema import (
    SLUG_PATTERN,
    Slug,
    Text,
    YamlModel,
    choice,
    located_error,
    refusal,
    validation_messages,
)

FORMAT = "teachlab-progress/1"
ACTIVITY_NOTE = (
    "lab_runs and experiment_attempts are summaries: the deliveries behind them are not in "
    "this file, so importing it counts them on the progress page but cannot replay or re-run them."
)
MAX_ITEMS = 20_000  # per list: far above a year of study, low enough to refuse junk quickly
SAID = {"holds up": True, "costs you the question": False}
# A clock a little ahead of the server's is fine; a date years ahead would win every merge.
FUTURE_SLACK = dt.timedelta(days=1)


def _not_future(value: dt.datetime) -> dt.datetime:
    if value > dt.datetime.now(dt.UTC) + FUTURE_SLACK:
        raise refusal("future", f"{value.isoformat()} is in the future")
    return value


def _is_slug(value: str) -> bool:
    return bool(_SLUG.match(value)) and len(value) <= SLUG_MAX


def _is_claim_key(value: str) -> bool:
    slug, _, claim = value.partition(":")
    return _is_slug(slug) and bool(_SLUG.match(claim))


def _claim_key(value: str) -> str:
    if not _is_claim_key(value):
        raise refusal("claim", f"{value!r} is not a claim key ('<question>:<claim id>')")
    return value


def _not_future_day(value: dt.date) -> dt.date:
    if value > dt.datetime.now(dt.UTC).date() + FUTURE_SLACK:
        raise refusal("future", f"{value.isoformat()} is in the future")
    return value


# Lengths match the columns they are stored in (lessons/models.py), so PostgreSQL never
# refuses what the checks let through.
SLUG_MAX = 80
_SLUG = re.compile(SLUG_PATTERN)
When = Annotated[AwareDatetime, AfterValidator(_not_future)]
PastDay = Annotated[dt.date, AfterValidator(_not_future_day)]
QuestionSlug = Annotated[Slug, Field(max_length=SLUG_MAX)]
ClaimKey = Annotated[Text, Field(max_length=200), AfterValidator(_claim_key)]
Count = Annotated[StrictInt, Field(ge=0, le=1_000_000)]


def items(kind: Any):
    return Annotated[list[kind], Field(max_length=MAX_ITEMS)]


class Record(YamlModel):
    """A record of the file: every key the export writes is declared (some are only read, like
    a quiz's score, which the import recomputes); an unknown key is refused by name."""

    yaml_noun: ClassVar[str] = "key"


class TierRevealRecord(Record):
    question: QuestionSlug
    tier: choice(TIERS, "tier")
    revealed_at: When


class SelfRatingRecord(Record):
    question: QuestionSlug
    tier: choice(TIERS, "tier")
    rating: choice(("missed", "partly", "nailed"), "rating")
    rated_at: When


class AnswerRecord(Record):
    claim: ClaimKey
    said: choice(tuple(SAID), "answer")
    correct: StrictBool
    answered_at: When


class QuizAttemptRecord(Record):
    id: StrictInt | None = None
    kind: choice(("question", "mixed", "retry", "review"), "quiz kind")
    question: QuestionSlug | None = None
    retry_of: StrictInt | None = None
    started_at: When
    claims_in_order: Annotated[list[ClaimKey], Field(max_length=200)]
    answers: Annotated[list[AnswerRecord], Field(max_length=200)] = []
    score: dict | None = None  # recomputed from the answers

    @model_validator(mode="after")
    def _consistent(self):
        if self.kind == "question" and not self.question:
            raise located_error(("question",), "a one-question quiz names its question")
        shown = set(self.claims_in_order)
        for i, answer in enumerate(self.answers):
            if answer.claim not in shown:
                raise located_error(
                    ("answers", i, "claim"), f"{answer.claim!r} is not in claims_in_order"
                )
        return self


class ReviewRecord(Record):
    kind: choice(("question", "claim"), "review kind")
    key: Annotated[Text, Field(max_length=200)]
    due_on: dt.date
    last_reviewed_on: PastDay  # a date ahead would win every later merge
    interval_days: Annotated[StrictInt, Field(ge=0, le=36_500)]
    repetitions: Count
    easiness: Annotated[float, Field(ge=1.3, le=5)]
    reviews: Count
    lapses: Count

    @model_validator(mode="after")
    def _key_fits_kind(self):
        claim = self.kind == "claim"
        if not (_is_claim_key(self.key) if claim else _is_slug(self.key)):
            wanted = "a claim key ('<question>:<claim id>')" if claim else "a question slug"
            raise located_error(("key",), f"{self.key!r} is not {wanted}")
        return self


class LabRunRecord(Record):
    id: Annotated[Text, Field(max_length=64)]
    lane: Annotated[Text, Field(max_length=40)]
    label: Annotated[str, Field(max_length=120)] = ""
    status: choice(("running", "done", "timed_out", "failed"), "run status")
    fired_at: When
    updated_at: When
    params: dict = {}
    prediction: StrictInt | None = None
    counts: dict[str, int | float] = {}


class ExperimentAttemptRecord(Record):
    id: Annotated[Text, Field(max_length=64)]
    experiment: QuestionSlug
    status: choice(("done", "failed"), "attempt status")
    prediction: Any = None
    started_at: When
    updated_at: When
    passed: StrictBool = False
    prediction_right: StrictBool = False


class ProgressFile(Record):
    yaml_name: ClassVar[str] = "progress file"
    format: str
    exported_at: When | None = None
    account: str | None = None
    learner_since: AwareDatetime | None = None
    note: str | None = None
    tiers_revealed: items(TierRevealRecord) = []
    self_ratings: items(SelfRatingRecord) = []
    quiz_attempts: items(QuizAttemptRecord) = []
    review: items(ReviewRecord) = []
    lab_runs: items(LabRunRecord) = []
    experiment_attempts: items(ExperimentAttemptRecord) = []


class ProgressFileError(Exception):
    """An upload that cannot be imported; `.problems` are the lines shown to the learner."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


CHOOSE_THE_FILE = "choose the .json file that “Download my progress” saved."


def progress_file_parse(raw: bytes) -> ProgressFile:
    """The checked file, or ProgressFileError saying every thing that is wrong with it."""
    try:
        checked = _parse(raw)
    except RecursionError:  # thousands of "[[[[" nest deeper than the parser (or a walk) goes
        raise ProgressFileError(
            ["The file nests lists or objects far deeper than a progress file does: "
             + CHOOSE_THE_FILE]
        ) from None  # fmt: skip
    rows = progress_rows(checked)
    most = settings.PROGRESS_IMPORT_MAX_ROWS
    if rows > most:
        raise ProgressFileError(
            [f"The file holds {rows:,} records; one import takes at most {most:,}, more than "
             "years of study make. If this is your own file, ask whoever runs this server."]
        )  # fmt: skip
    return checked


def progress_rows(upload: ProgressFile) -> int:
    """The rows an import of `upload` could write: each record, and each quiz answer."""
    lists = (upload.tiers_revealed, upload.self_ratings, upload.quiz_attempts, upload.review,
             upload.lab_runs, upload.experiment_attempts)  # fmt: skip
    return sum(map(len, lists)) + sum(len(a.answers) for a in upload.quiz_attempts)


def _parse(raw: bytes) -> ProgressFile:
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ProgressFileError(["The file is not text (UTF-8): " + CHOOSE_THE_FILE]) from None
    except json.JSONDecodeError as exc:
        raise ProgressFileError(
            [f"The file is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."]
        ) from None
    except ValueError:  # Python reads no integer of more than 4,300 digits
        raise ProgressFileError(
            ["The file holds a number thousands of digits long; no progress file does: "
             + CHOOSE_THE_FILE]
        ) from None  # fmt: skip
    if not isinstance(data, dict):
        raise ProgressFileError(["The file holds JSON, but not a progress file (an object)."])
    nul = _nul_at(data)
    if nul is not None:
        # PostgreSQL stores no NUL character in text or JSON; no real progress holds one.
        raise ProgressFileError(
            [f"{nul or 'progress file'}: a text holds a NUL character (\\u0000)"]
        )
    found = data.get("format")
    if found != FORMAT:
        shown = "no format" if found is None else f"format {str(found)[:60]!r}"
        raise ProgressFileError(
            [
                f"format: this file has {shown}; this app reads {FORMAT!r} files, the kind "
                "“Download my progress” saves."
            ]
        )
    try:
        return ProgressFile.model_validate(data)
    except ValidationError as exc:
        problems = validation_messages(ProgressFile, exc)
        shown = problems[:20]
        if len(problems) > len(shown):
            shown.append(f"… and {len(problems) - len(shown)} more problems")
        raise ProgressFileError(shown) from None


def _nul_at(value, where: str = "") -> str | None:
    """Where the first NUL character is, in the messages' notation, or None."""
    if isinstance(value, str):
        return where if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            if "\x00" in str(key):
                return where or str(key)
            found = _nul_at(item, f"{where}.{key}" if where else str(key))
            if found is not None:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _nul_at(item, f"{where}[{i}]")
            if found is not None:
                return found
    return None


# --- what an export holds about lab runs and experiment attempts ----------------------------


def _epoch_iso(value: float | None) -> str | None:
    return dt.datetime.fromtimestamp(value, dt.UTC).isoformat() if value else None


def iso_or_none(value) -> str | None:
    return value.isoformat() if value is not None else None


def lab_runs_export(*, learner) -> list[dict]:
    """Every lab run of this learner as a summary (its counters, not its deliveries), and the
    summaries an earlier import brought in."""
    from lessons.models import ImportedActivity
    from teachlab.lab.eventlog.labevent import rows_state
    from teachlab.lab.eventlog.runstate import RunState
    from teachlab.lab.models import RunEvent

    runs = list(learner.lab_runs.order_by("created_at"))
    states = {run.id: RunState(run.task_ids) for run in runs}
    stored = RunEvent.objects.filter(run__learner=learner).order_by("run_id", "seq")
    for event in rows_state(stored):
        states[event.run].apply(event)
    rows = []
    for run in runs:
        counts = states[run.id].counts()
        rows.append(
            {
                "id": run.id,
                "lane": run.lane,
                "label": run.label,
                "status": run.status,
                "fired_at": _epoch_iso(run.fired_at),
                "updated_at": _epoch_iso(run.settled_at or run.fired_at),
                "params": run.params,
                "prediction": run.prediction,
                "counts": {
                    key: counts[key]
                    for key in ("tasks", "receipts", "executions", "duplicates", "suppressed")
                },
            }
        )
    own = {run.id for run in runs}
    imported = learner.imported_activity.filter(kind=ImportedActivity.Kind.LAB_RUN)
    for item in imported.order_by("happened_at", "source_id"):
        if item.source_id not in own:
            rows.append(item.summary)
    return rows


def experiment_attempts_export(*, learner) -> list[dict]:
    """Finished experiment attempts (done or failed) with their verdict, and imported ones."""
    from lessons.models import ImportedActivity

    rows = []
    own = set()
    for attempt in learner.experiment_attempts.filter(status__in=("done", "failed")).order_by(
        "created_at"
    ):
        own.add(attempt.id)
        result = attempt.result if isinstance(attempt.result, dict) else {}
        verdict = result.get("prediction") if isinstance(result.get("prediction"), dict) else {}
        rows.append(
            {
                "id": attempt.id,
                "experiment": attempt.slug,
                "status": attempt.status,
                "prediction": (attempt.prediction or {}).get("value"),
                "started_at": iso_or_none(attempt.started_at or attempt.created_at),
                "updated_at": iso_or_none(
                    attempt.finished_at or attempt.started_at or attempt.created_at
                ),
                "passed": attempt.status == "done" and bool(result.get("passed")),
                "prediction_right": attempt.status == "done" and bool(verdict.get("matched")),
            }
        )
    imported = learner.imported_activity.filter(kind=ImportedActivity.Kind.EXPERIMENT)
    for item in imported.order_by("happened_at", "source_id"):
        if item.source_id not in own:
            rows.append(item.summary)
    return rows

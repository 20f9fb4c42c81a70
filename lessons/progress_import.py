"""Merge a checked progress file (lessons/progress_file.py) into a learner's progress.

The rule, record by record: what is not here is added; what is here already is kept unless
the file's copy is newer by that record's own timestamp. So an import never loses anything,
never overwrites newer data, and importing the same file twice changes nothing the second time.

| record | same record when | newer by |
|---|---|---|
| tier revealed | question + tier | (a fact: kept as it is) |
| self-rating | question + tier + `rated_at` | (history: each rating is its own record) |
| quiz attempt | kind + question + `started_at` | answers: the first answer to a claim counts, as in the quiz |
| review item | kind + key | `last_reviewed_on` (a tie keeps this browser's) |
| lab run, experiment attempt | its id | `updated_at`; a run or attempt of this learner's own always wins |
"""

from __future__ import annotations

import datetime as dt
import random
import time
from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction

from lessons.models import (
    ImportedActivity,
    Learner,
    QuizAnswer,
    QuizAttempt,
    ReviewItem,
    SelfRating,
    TierReveal,
)
from lessons.progress_file import SAID, ProgressFile, ProgressFileError
from lessons.record_nouns import counted


@dataclass
class ImportReport:
    """What an import did, per kind of record: added, updated (the file's was newer), kept."""

    added: Counter = field(default_factory=Counter)
    updated: Counter = field(default_factory=Counter)
    kept: Counter = field(default_factory=Counter)
    deadline: float = float("inf")  # time.monotonic() past which the import gives up

    def in_time(self) -> None:
        """Called before each record: past the deadline, the transaction is rolled back."""
        if time.monotonic() > self.deadline:
            raise ImportTooSlow(
                [f"The import took more than {settings.PROGRESS_IMPORT_MAX_SECONDS:g} s and "
                 "was undone; the server is busy. Try again in a few minutes."]
            )  # fmt: skip

    def lines(self) -> list[str]:
        out = []
        for title, counter in (
            ("Added", self.added),
            ("Updated (the file's copy was newer)", self.updated),
            ("Already here, kept", self.kept),
        ):
            parts = [counted(what, n) for what, n in counter.items() if n]
            if parts:
                out.append(f"{title}: {', '.join(parts)}.")
        return out or ["The file held no progress."]

    @property
    def changed(self) -> int:
        return sum(self.added.values()) + sum(self.updated.values())


def keys_for_order(order: list[str], seed: int) -> list[str]:
    """The claim list that lessons.quiz.ordered_keys shuffles into `order` with `seed`, so an
    imported attempt shows its claims in the order the learner saw them."""
    positions = list(range(len(order)))
    random.Random(seed).shuffle(positions)
    keys = [""] * len(order)
    for shown_at, source in enumerate(positions):
        keys[source] = order[shown_at]
    return keys


class ImportTooSlow(ProgressFileError):
    """The import ran past PROGRESS_IMPORT_MAX_SECONDS and was undone."""


def progress_import(*, learner: Learner, upload: ProgressFile) -> ImportReport:
    """Raises ImportTooSlow, having stored nothing, when it runs out of time."""
    report = ImportReport(deadline=time.monotonic() + settings.PROGRESS_IMPORT_MAX_SECONDS)
    with transaction.atomic():
        # Two imports at once (a double submit) run one after the other, so the second
        # finds what the first added instead of adding it again.
        list(Learner.objects.select_for_update().filter(pk=learner.pk).values_list("pk"))
        _tiers(learner, upload, report)
        _ratings(learner, upload, report)
        _attempts(learner, upload, report)
        _review(learner, upload, report)
        _activity(learner, upload, report)
    return report


def _tiers(learner: Learner, upload: ProgressFile, report: ImportReport) -> None:
    have = set(learner.tier_reveals.values_list("question_slug", "tier"))
    for r in upload.tiers_revealed:
        report.in_time()
        if (r.question, r.tier) in have:
            report.kept["tiers revealed"] += 1
            continue
        row = TierReveal.objects.create(learner=learner, question_slug=r.question, tier=r.tier)
        TierReveal.objects.filter(pk=row.pk).update(revealed_at=r.revealed_at)  # not "now"
        have.add((r.question, r.tier))
        report.added["tiers revealed"] += 1


def _ratings(learner: Learner, upload: ProgressFile, report: ImportReport) -> None:
    have = set(learner.self_ratings.values_list("question_slug", "tier", "rated_at"))
    for r in upload.self_ratings:
        report.in_time()
        if (r.question, r.tier, r.rated_at) in have:
            report.kept["self-ratings"] += 1
            continue
        row = SelfRating.objects.create(
            learner=learner, question_slug=r.question, tier=r.tier, rating=r.rating
        )
        SelfRating.objects.filter(pk=row.pk).update(rated_at=r.rated_at)
        have.add((r.question, r.tier, r.rated_at))
        report.added["self-ratings"] += 1


def _attempts(learner: Learner, upload: ProgressFile, report: ImportReport) -> None:
    existing = {(a.kind, a.question_slug, a.created_at): a for a in learner.quiz_attempts.all()}
    by_file_id: dict[int, QuizAttempt] = {}
    for record in sorted(upload.quiz_attempts, key=lambda a: a.started_at):
        report.in_time()
        question = record.question or ""
        attempt = existing.get((record.kind, question, record.started_at))
        if attempt is None:
            retry_of = by_file_id.get(record.retry_of) if record.retry_of is not None else None
            attempt = QuizAttempt.objects.create(
                learner=learner,
                kind=record.kind,
                question_slug=question if record.kind == QuizAttempt.Kind.QUESTION else "",
                seed=0,
                claim_keys=keys_for_order(record.claims_in_order, 0),
                retry_of=retry_of,
            )
            QuizAttempt.objects.filter(pk=attempt.pk).update(created_at=record.started_at)
            existing[(record.kind, question, record.started_at)] = attempt
            report.added["quiz attempts"] += 1
        else:
            report.kept["quiz attempts"] += 1
        if record.id is not None:
            by_file_id[record.id] = attempt
        answered = set(attempt.answers.values_list("claim_key", flat=True))
        for a in record.answers:
            report.in_time()
            if a.claim in answered:
                report.kept["quiz answers"] += 1
                continue
            row = QuizAnswer.objects.create(
                attempt=attempt,
                claim_key=a.claim,
                question_slug=a.claim.partition(":")[0],
                said_holds=SAID[a.said],
                correct=a.correct,
            )
            QuizAnswer.objects.filter(pk=row.pk).update(answered_at=a.answered_at)
            answered.add(a.claim)
            report.added["quiz answers"] += 1


REVIEW_FIELDS = (
    "due_on",
    "last_reviewed_on",
    "interval_days",
    "repetitions",
    "easiness",
    "reviews",
    "lapses",
)


def _review(learner: Learner, upload: ProgressFile, report: ImportReport) -> None:
    have = {(i.kind, i.key): i for i in learner.review_items.all()}
    for r in upload.review:
        report.in_time()
        values = {name: getattr(r, name) for name in REVIEW_FIELDS}
        item = have.get((r.kind, r.key))
        if item is None:
            have[(r.kind, r.key)] = ReviewItem.objects.create(
                learner=learner,
                kind=r.kind,
                key=r.key,
                question_slug=r.key.partition(":")[0],
                **values,
            )
            report.added["review items"] += 1
        elif r.last_reviewed_on > item.last_reviewed_on:
            for name, value in values.items():
                setattr(item, name, value)
            item.save(update_fields=list(REVIEW_FIELDS))
            report.updated["review items"] += 1
        else:
            report.kept["review items"] += 1


def _activity(learner: Learner, upload: ProgressFile, report: ImportReport) -> None:
    kinds = (
        (ImportedActivity.Kind.LAB_RUN, upload.lab_runs, "lab run summaries", learner.lab_runs),
        (
            ImportedActivity.Kind.EXPERIMENT,
            upload.experiment_attempts,
            "experiment attempt summaries",
            learner.experiment_attempts,
        ),
    )
    for kind, records, what, own in kinds:
        ids = [r.id for r in records]
        mine = set(own.filter(id__in=ids).values_list("id", flat=True))
        have = {a.source_id: a for a in learner.imported_activity.filter(kind=kind)}
        for r in records:
            report.in_time()
            summary = {  # the record as the export writes it, so a re-export matches
                k: v.isoformat() if isinstance(v, dt.datetime) else v
                for k, v in r.model_dump().items()
            }
            item = have.get(r.id)
            if r.id in mine or (item is not None and item.updated_at >= r.updated_at):
                report.kept[what] += 1
                continue
            values = {
                "slug": getattr(r, "experiment", ""),
                "happened_at": getattr(r, "fired_at", None) or r.started_at,
                "updated_at": r.updated_at,
                "summary": summary,
            }
            if item is None:
                have[r.id] = ImportedActivity.objects.create(
                    learner=learner, kind=kind, source_id=r.id, **values
                )
                report.added[what] += 1
            else:
                for name, value in values.items():
                    setattr(item, name, value)
                item.save(update_fields=list(values))
                report.updated[what] += 1

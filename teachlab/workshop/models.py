"""Workshop rooms: an instructor drives, participants hold seats, votes and predictions are kept.

Claim rounds copy the claim's text and verdict when they open, so the results of a finished
workshop still read correctly after the lesson files change.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models

from teachlab.workshop.errors import WorkshopError

# No 0/O, 1/I/L: the code is read off a projector and typed on a phone.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
NICKNAME_MAX = 24
KEY_MAX = 255  # NFKC and skeletons grow a name: "ﬃ" is one character, "ffi" three
ANSWER_MAX = 400  # a few sentences: read off the projector, typed on a phone


def new_room_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_seat_token() -> str:
    return secrets.token_urlsafe(24)


class Room(models.Model):
    code = models.CharField(max_length=12, unique=True, default=new_room_code)
    title = models.CharField(max_length=120)
    instructor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="workshop_rooms"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    # What the presenter shows; participants in follow mode see the same.
    question_slug = models.CharField(max_length=100, blank=True)
    tier = models.CharField(max_length=20, blank=True)
    staged_at = models.DateTimeField(null=True, blank=True)  # when the stage last changed
    claim_round = models.ForeignKey(
        "ClaimRound", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    shared_run = models.ForeignKey(
        "SharedRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Moderation and scores (issue 12): no new seats while locked; the leaderboard is shown
    # to the room only when the instructor turns it on.
    joins_locked = models.BooleanField(default=False)
    leaderboard = models.BooleanField(default=False)
    answer_round = models.ForeignKey(
        "AnswerRound", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A room started from a session plan (planrun.py) keeps its own copy of the steps: the
    # plan may be edited for the next class while this one runs. Empty: a free room.
    plan_title = models.CharField(max_length=120, blank=True)
    plan_steps = models.JSONField(default=list, blank=True)
    plan_at = models.IntegerField(null=True, blank=True)  # index of the step applied last
    # The console's B key: the projector shows nothing until it is pressed again (issue 28).
    blanked = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.code} {self.title}"

    @property
    def is_open(self) -> bool:
        return self.closed_at is None

    def require_open(self) -> None:
        """Refuse whatever would change a closed room, in words fit to show who acted."""
        if not self.is_open:
            raise WorkshopError("This workshop has ended; nothing more is accepted.")


class SeatQuerySet(models.QuerySet):
    def seated(self) -> SeatQuerySet:
        """Seats taking part: those the instructor removed are kept, but not counted."""
        return self.filter(kicked_at__isnull=True)


class Seat(models.Model):
    """One participant in one room; the token in their cookie brings them back to it."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="seats")
    nickname = models.CharField(max_length=NICKNAME_MAX)
    nickname_key = models.CharField(max_length=KEY_MAX)  # NFKC, casefolded, for uniqueness
    # UTS #39 skeletons of the name as typed and case-folded (names.py): look-alikes collide.
    skeleton = models.CharField(max_length=KEY_MAX, blank=True, db_index=True)
    skeleton_folded = models.CharField(max_length=KEY_MAX, blank=True, db_index=True)
    token = models.CharField(max_length=64, unique=True, default=new_seat_token)
    joined_at = models.DateTimeField(auto_now_add=True)
    # Set when the instructor removes the seat: its cookie no longer seats anyone, its
    # sockets are closed, and that browser cannot join the room again until readmitted.
    kicked_at = models.DateTimeField(null=True, blank=True)

    objects = SeatQuerySet.as_manager()

    class Meta:
        ordering = ["joined_at"]
        constraints = [
            models.UniqueConstraint(fields=["room", "nickname_key"], name="seat_nickname_unique")
        ]

    def __str__(self) -> str:
        return self.nickname


class ClaimRound(models.Model):
    """A claim the instructor put to the room: open for votes until revealed."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="claim_rounds")
    claim_key = models.CharField(max_length=200)
    question_slug = models.CharField(max_length=100)
    text = models.TextField()
    holds = models.BooleanField()
    why = models.TextField(blank=True)
    truth = models.TextField(blank=True)
    opened_at = models.DateTimeField(auto_now_add=True)
    revealed_at = models.DateTimeField(null=True, blank=True)
    closes_at = models.DateTimeField(null=True, blank=True)  # the vote timer's deadline
    # Set when the next claim replaced this one before its reveal: votes stop, but nobody
    # saw the answer, so it is not revealed and not scored.
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["opened_at"]

    def __str__(self) -> str:
        return self.claim_key

    @property
    def right_choice(self) -> str:
        return Vote.HOLDS if self.holds else Vote.COSTS


class Vote(models.Model):
    HOLDS = "holds"
    COSTS = "costs"
    CHOICES = [(HOLDS, "Holds up"), (COSTS, "Costs you the question")]

    round = models.ForeignKey(ClaimRound, on_delete=models.CASCADE, related_name="votes")
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="votes")
    choice = models.CharField(max_length=8, choices=CHOICES)
    cast_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["round", "seat"], name="one_vote_per_seat")]

    def __str__(self) -> str:
        return f"{self.seat} {self.choice}"


class SharedRun(models.Model):
    """A lab run the whole room predicts, then watches; `run_id` is set when it is fired."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="shared_runs")
    title = models.CharField(max_length=200)
    experiment_slug = models.CharField(max_length=100, blank=True)
    prompt = models.CharField(max_length=300)
    metric = models.CharField(max_length=40, default="receipts")
    params = models.JSONField(default=dict)
    run_id = models.CharField(max_length=64, blank=True)
    opened_at = models.DateTimeField(auto_now_add=True)
    fired_at = models.DateTimeField(null=True, blank=True)
    observed = models.IntegerField(null=True, blank=True)
    # When the observation was stored: by the lab monitor's settle (signal), the room's hub,
    # or the presenter's "show the outcome now", whichever came first.
    settled_at = models.DateTimeField(null=True, blank=True)
    # Off until the instructor shows it: later guessers would anchor on the earlier ones.
    spread_shown = models.BooleanField(default=False)

    class Meta:
        ordering = ["opened_at"]

    def __str__(self) -> str:
        return self.title


class Prediction(models.Model):
    shared_run = models.ForeignKey(SharedRun, on_delete=models.CASCADE, related_name="predictions")
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="predictions")
    value = models.IntegerField()
    made_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["shared_run", "seat"], name="one_prediction_per_seat")
        ]

    def __str__(self) -> str:
        return f"{self.seat} {self.value}"


class AnswerRound(models.Model):
    """The room writes its own answer to a question's prompt before the tiers are shown."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="answer_rounds")
    question_slug = models.CharField(max_length=100)
    opened_at = models.DateTimeField(auto_now_add=True)
    closes_at = models.DateTimeField(null=True, blank=True)  # the timer's deadline, if any
    ended_at = models.DateTimeField(null=True, blank=True)  # the instructor ended it

    class Meta:
        ordering = ["opened_at"]

    def __str__(self) -> str:
        return f"{self.room_id} {self.question_slug}"

    def shown_answers(self):
        """The answers the instructor put on the projector (without their nicknames)."""
        return self.answers.filter(shown=True)


class Answer(models.Model):
    """One seat's answer in a round; shown on the projector without its nickname."""

    round = models.ForeignKey(AnswerRound, on_delete=models.CASCADE, related_name="answers")
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="answers")
    text = models.CharField(max_length=ANSWER_MAX)
    written_at = models.DateTimeField(auto_now=True)
    shown = models.BooleanField(default=False)

    class Meta:
        ordering = ["written_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["round", "seat"], name="one_answer_per_seat")
        ]

    def __str__(self) -> str:
        return f"{self.seat} {self.text[:20]}"


class PlanQuerySet(models.QuerySet):
    def owned_by(self, user) -> PlanQuerySet:
        return self.filter(owner=user) if user.is_authenticated else self.none()


class Plan(models.Model):
    """A session prepared before class: ordered steps (planformat.py says what a step is)."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="workshop_plans"
    )
    title = models.CharField(max_length=120)
    steps = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = PlanQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.title

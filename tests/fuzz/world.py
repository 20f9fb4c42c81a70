"""The things fuzzed requests and frames aim at (a learner with a quiz attempt, a run and an
experiment attempt; another learner's; a workshop room with an instructor, a seat, an open
claim and a shared run), and the state a refused input must leave as it was.

The state is every row count of the project's models, the workshop's and attempts' changeable
columns (two SQL statements), and the lab's Redis keys (runs, logs, guard keys, quotas, worker
controls: one scan). Throttle and frame-budget counters are left out: counting refused attempts
is what they are for. The Redis keys are read after every input; the two SQL statements only
after an input that ran SQL other than a read (`WriteWatch`), since rows cannot change without
one: that halves the cost of an input, which is what lets CI try 2,000 per target.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.utils import timezone

from lessons.catalog import all_questions
from teachlab.lab.experiments.catalog import experiments_load
from teachlab.lab.experiments.models import Attempt
from teachlab.lab.runs.store import app_redis
from teachlab.workshop import content, plans, rooms, rounds, votes
from teachlab.workshop.models import SharedRun
from tests.lab.test_consumer import _finished_run
from tests.lessons.quiz_support import ALPHA, BETA, client_learner, start_quiz

PASSWORD = "fuzz-pass-123!"
NO_LANE = "fuzz-no-such-lane"  # a shared run on it is refused when fired: nothing published


# Tables made from the content files, not from what anyone did: the first search fills the
# search index (lessons/search_index.py), a page that changes nothing a learner owns.
DERIVED_TABLES = {"lessons_searchentry"}


@functools.cache
def _count_sql() -> str:
    qn = connection.ops.quote_name
    tables = sorted(
        m._meta.db_table
        for m in apps.get_models()
        if m.__module__.startswith(("lessons.", "teachlab.")) or m is get_user_model()
        if m._meta.db_table not in DERIVED_TABLES
    )
    counts = (f"SELECT '{t}', COUNT(*) FROM {qn(t)}" for t in tables)  # noqa: S608 - model tables
    return " UNION ALL ".join(counts)


def _t(column: str) -> str:
    return f"COALESCE(CAST({column} AS TEXT), '-')"


# Columns a refused action could change without adding a row.
FINGERPRINTS = {
    "workshop_room": [
        "id",
        "closed_at",
        "question_slug",
        "tier",
        "claim_round_id",
        "shared_run_id",
        "joins_locked",
        "leaderboard",
        "answer_round_id",
    ],
    "workshop_claimround": ["id", "revealed_at", "closes_at"],
    "workshop_sharedrun": ["id", "fired_at", "run_id", "observed", "spread_shown"],
    "workshop_vote": ["id", "choice"],
    "workshop_prediction": ["id", "value"],
    "workshop_seat": ["id", "nickname", "kicked_at"],
    "workshop_answerround": ["id", "closes_at", "ended_at"],
    "workshop_answer": ["id", "text", "shown"],
    "lab_experiments_attempt": ["id", "status"],
}


def _fingerprint_sql() -> str:
    parts = []
    for table, columns in FINGERPRINTS.items():
        joined = " || '|' || ".join(_t(c) for c in columns)
        parts.append(f"SELECT '{table}', {joined} FROM {table}")  # noqa: S608 - fixed names
    return " UNION ALL ".join(parts)


FINGERPRINT_SQL = _fingerprint_sql()
COUNTED_ELSEWHERE = ("lab:workers",)
RUN_QUOTAS = "teachlab-limits:lab-runs*"  # teachlab/core/ratelimits.py's moving windows


class WriteWatch:
    """Counts SQL statements that may change rows, in every thread and on every connection (the
    sockets' database work runs in a thread pool), by wrapping Django's cursor class.

    Reads are the statements that start with one of READS; anything else (INSERT, UPDATE,
    DELETE, a WITH that may hide one, DDL) counts as a write. Erring that way only costs a
    needless re-read of the rows, never a missed change."""

    READS = ("SELECT", "SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT", "SET ", "SHOW ")
    writes = 0

    @classmethod
    def note(cls, sql) -> None:
        text = sql if isinstance(sql, str) else str(sql)
        if not text.lstrip().upper().startswith(cls.READS):
            cls.writes += 1

    @classmethod
    def install(cls, monkeypatch) -> None:
        from django.db.backends.utils import CursorWrapper

        execute, executemany = CursorWrapper.execute, CursorWrapper.executemany

        def watched_execute(self, sql, params=None):
            cls.note(sql)
            return execute(self, sql, params)

        def watched_executemany(self, sql, param_list):
            cls.note(sql)
            return executemany(self, sql, param_list)

        monkeypatch.setattr(CursorWrapper, "execute", watched_execute)
        monkeypatch.setattr(CursorWrapper, "executemany", watched_executemany)
        cls.writes += 1  # whatever was read before the watch began is stale


_rows_read: dict = {"writes": None, "rows": None}


def rows_state() -> tuple:
    """Row counts and changeable columns, read again only if a write ran since the last read."""
    if _rows_read["writes"] != WriteWatch.writes or _rows_read["rows"] is None:
        with connection.cursor() as cursor:
            cursor.execute(_count_sql())
            counts = sorted(cursor.fetchall())
            cursor.execute(FINGERPRINT_SQL)
            columns = sorted(cursor.fetchall(), key=repr)
        _rows_read.update(writes=WriteWatch.writes, rows=(counts, columns))
    return _rows_read["rows"]


def state() -> tuple:
    """What a refused input must not change: rows, changeable columns, the lab's Redis keys."""
    counts, columns = rows_state()
    return counts, columns, redis_state()


def redis_state() -> dict[str, str]:
    client = app_redis()
    keys = sorted(
        k for k in client.scan_iter(match="lab*", count=1000) if not k.startswith(COUNTED_ELSEWHERE)
    )
    # Run quotas by how much is spent (a refused run must not spend one); the rest by presence.
    quotas = sorted(client.scan_iter(match=RUN_QUOTAS, count=1000))
    values = {k: str(client.llen(k)) for k in quotas if client.type(k) == "list"}
    return {**{k: "" for k in keys}, **values}


def state_changes(before: tuple, after: tuple) -> list[str]:
    """What differs, in words; empty when equal, except that Redis keys may expire in between
    (quotas last a minute)."""
    (rows_a, cols_a, redis_a), (rows_b, cols_b, redis_b) = before, after
    changes = [f"rows {a} -> {b}" for a, b in zip(rows_a, rows_b, strict=False) if a != b]
    changes += [f"row gone: {row}" for row in sorted(set(cols_a) - set(cols_b), key=repr)]
    changes += [f"row new: {row}" for row in sorted(set(cols_b) - set(cols_a), key=repr)]
    changes += [f"redis {k}={v!r}" for k, v in redis_b.items() if redis_a.get(k) != v]
    return changes


def same_state(before: tuple, after: tuple) -> bool:
    return not state_changes(before, after)


@dataclass
class World:
    clients: dict[str, Client] = field(default_factory=dict)
    ids: dict = field(default_factory=dict)
    good: dict = field(default_factory=dict)
    baseline: tuple = ()
    kept: dict = field(default_factory=dict)
    sent: int = 0  # generated inputs sent to the target

    def once(self, key, build):
        """A value built on first use and kept for the world's life: the targets' strategies,
        which cost more to build than to draw from (and Hypothesis validates each new one)."""
        if key not in self.kept:
            self.kept[key] = build()
        return self.kept[key]

    def reopen_room(self) -> None:
        """After an accepted close: open the room again so later inputs reach its actions."""
        from teachlab.workshop.models import Room

        Room.objects.filter(pk=self.ids["room_pk"]).update(closed_at=None)

    def answers_end(self) -> None:
        """End the answer round, so the answers in it can be shown (answer_show's target)."""
        from teachlab.workshop.models import Room

        rounds.answer_round_end(room=Room.objects.get(pk=self.ids["room_pk"]))


_handler = None


def _client() -> Client:
    """A test client sharing one request handler: each new handler loads the middleware, and
    WhiteNoise's scan of the static files there costs half a second."""
    global _handler
    client = Client()
    if _handler is None:
        _handler = client.handler
    client.handler = _handler
    return client


def _client_with_session() -> Client:
    client = _client()
    client.get("/quiz/")  # creates the learner behind the session
    return client


def world_build() -> World:
    world = World()
    learner_client = _client_with_session()
    other_client = _client_with_session()
    learner = client_learner(learner_client)
    other = client_learner(other_client)
    world.clients["learner"] = learner_client
    world.clients["anon"] = _client_with_session()  # signed out (sign-in targets sign it in)

    world.ids["quiz"] = start_quiz(learner_client, ALPHA)
    world.ids["quiz_mixed"] = start_quiz(learner_client, "")
    world.ids["quiz_other"] = start_quiz(other_client, BETA)
    run = _finished_run(learner, receipts=2)
    other_run = _finished_run(other, receipts=1)
    world.ids["run"], world.ids["run_other"] = run.id, other_run.id

    experiments = experiments_load()
    now = timezone.now()
    # Running, with a start and a beat in the future: every new attempt is refused ("still
    # running"), so nothing is queued for a jobs worker and no lane is fired, and the sweep
    # that pages run (attempts.attempts_expire) never finds it lost or overrun however long
    # the fuzzing takes (a sweep that fails it would be a change made by a GET).
    attempt = Attempt.objects.create(
        learner=learner,
        slug=experiments[0].slug,
        prediction={"kind": "number", "value": 1},
        status=Attempt.Status.RUNNING,
        runs={"main": run.id},
        started_at=now + timezone.timedelta(days=1),
        beat_at=now + timezone.timedelta(days=1),
    )
    other_attempt = Attempt.objects.create(
        learner=other, slug=experiments[0].slug, status=Attempt.Status.DONE, runs={}
    )
    world.ids["attempt"], world.ids["attempt_other"] = attempt.id, other_attempt.id
    world.good["experiments"] = [e.slug for e in experiments]
    predictions = [str(n) for n in range(0, 6)]
    predictions += [c["id"] for e in experiments for c in e.prediction.get("choices", [])]

    User = get_user_model()
    instructor = User.objects.create_user("fuzz-instructor", password=PASSWORD, is_staff=True)
    User.objects.create_user("fuzz-learner", password=PASSWORD)
    instructor_client = _client()
    instructor_client.force_login(instructor)
    instructor_client.get("/quiz/")
    world.clients["instructor"] = instructor_client

    room = rooms.room_create(instructor=instructor, title="Fuzz room")
    seat = rooms.seat_join(room=room, nickname="ana")
    # Removed, so a readmit has something to undo (and a kick of the participant's seat too).
    seat_other = rooms.seat_join(room=room, nickname="bo")
    rooms.seat_kick(room=room, seat_id=seat_other.pk)
    participant = _client()
    participant.cookies[rooms.seat_cookie_name(room.code)] = seat.token
    participant.get("/quiz/")
    world.clients["participant"] = participant
    questions = list(all_questions())
    claims = [c.key for q in questions for c in q.claims]
    # An open answer round with the participant's answer in it (answer frames reach it;
    # answer_show's target ends the round first: World.answers_end).
    rooms.room_drive(room=room, question_slug=questions[0].slug, tier="basics")
    answer_round = rounds.answer_round_open(room=room)
    answer = rounds.answer_submit(seat=seat, round_id=answer_round.pk, text="fuzz answer")
    claim_round = votes.claim_open(room=room, claim_key=claims[0])
    shared = SharedRun.objects.create(
        room=room, title="fuzz", prompt="How many?", params={"lane": NO_LANE, "count": 1}
    )
    # An earlier run with an outcome: what the ranking pages page through.
    shared_done = SharedRun.objects.create(
        room=room,
        title="fuzz done",
        prompt="How many?",
        params={"lane": NO_LANE, "count": 1},
        run_id="fuzz-done",
        fired_at=now,
        observed=3,
    )
    room.shared_run = shared
    room.save(update_fields=["shared_run"])
    world.ids.update(
        room=room.code, room_pk=room.pk, seat=seat.pk, round=claim_round.pk, shared=shared.pk
    )
    world.ids["seat_token"] = seat.token
    world.ids.update(
        seat_other=seat_other.pk,
        answer_round=answer_round.pk,
        answer=answer.pk,
        shared_done=shared_done.pk,
    )
    world.ids["instructor"] = instructor.pk
    # Session plans: the instructor's own, and another staff account's (always a 404 to them).
    plan_steps = [
        {"kind": "tier", "question": questions[0].slug, "tier": "basics"},
        {"kind": "claim", "claim": claims[0]},
    ]
    plan = plans.plan_create(owner=instructor, title="Fuzz plan", steps=plan_steps)
    colleague = User.objects.create_user("fuzz-colleague", password=PASSWORD, is_staff=True)
    plan_other = plans.plan_create(owner=colleague, title="Not yours", steps=plan_steps)
    world.ids.update(plan=plan.pk, plan_other=plan_other.pk, plan_steps=["0", "1"])
    world.good.update(
        questions=[q.slug for q in questions],
        claims=claims,
        tiers=["prompt", "basics", "solid", "senior"],
        worker_actions=["shutdown", "crash", "restart"],
        exports=["participants", "claims", "runs"],
        room_experiments=[e.slug for e in content.room_experiments()],
        predictions=predictions,
        nicknames=["ana", "bo", "cy", "Ana", "b\u043e"],
        # The learner's own progress file ("Download my progress"): importing it adds nothing.
        progress_file=[learner_client.get("/progress/download/").content],
        plan_file=[plans.plan_export(plan=plan)],
    )
    world.baseline = state()
    world.ids["built_at"] = time.time()
    return world


INPUTS_SENT: dict[str, int] = {}  # test id -> inputs its target was sent (conftest prints them)


def inputs_counted(test_id: str, sent: int) -> None:
    """Record a target's count and fail its teardown when it got fewer inputs than asked for
    (Hypothesis stops early when a target's input space runs out)."""
    from tests.fuzz.strategies import EXAMPLES

    INPUTS_SENT[test_id] = sent
    assert sent >= EXAMPLES, f"{test_id}: {sent} generated inputs, fewer than {EXAMPLES}"

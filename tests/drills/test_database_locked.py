"""Drill: the database is locked by another connection for a few seconds (SQLite: an
exclusive transaction; PostgreSQL under DATABASE_URL: LOCK TABLE ... ACCESS EXCLUSIVE on the
review table, so a quiz answer's first insert succeeds and its second waits).

Checked: a write that cannot get its lock within TEACHLAB_DB_LOCK_TIMEOUT answers 503 with a
message and Retry-After (teachlab/core/dbbusy.py), as HTML or as JSON; nothing of it is stored,
not even the half that got in; the same answer sent again once the lock is gone is stored once.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3

import pytest

from tests import stack
from tests.drills.stack import live_rows
from tests.support.http import Visitor
from tests.support.servers import ServerProcess, daphne_argv

pytestmark = [pytest.mark.broker, pytest.mark.slow]


@contextlib.contextmanager
def database_locked():
    """Another connection holding the lock a backup, a migration or a stuck script would."""
    if stack.live_database_url():
        import psycopg

        with psycopg.connect(stack.live_database_url(), connect_timeout=10) as conn:
            conn.execute("LOCK TABLE lessons_reviewitem IN ACCESS EXCLUSIVE MODE")
            yield
            conn.rollback()
        return
    conn = sqlite3.connect(os.environ["TEACHLAB_DB_PATH"], isolation_level=None, timeout=30)
    try:
        conn.execute("BEGIN EXCLUSIVE")
        yield
        conn.execute("ROLLBACK")
    finally:
        conn.close()


def _stored(attempt: str, claim: str) -> tuple[int, int]:
    answers = live_rows(
        "SELECT COUNT(*) FROM lessons_quizanswer WHERE attempt_id = ? AND claim_key = ?",
        (int(attempt), claim),
    )[0][0]
    (learner,) = live_rows(
        "SELECT learner_id FROM lessons_quizattempt WHERE id = ?", (int(attempt),)
    )[0]
    reviews = live_rows(
        'SELECT COUNT(*) FROM lessons_reviewitem WHERE learner_id = ? AND "key" = ?',
        (learner, claim),
    )[0][0]
    return answers, reviews


@pytest.fixture(scope="module")
def locked_server(drill_stack):
    """A server that gives up on a lock after 1.5 s (the default is 30 s)."""
    env = {**drill_stack.env, "TEACHLAB_DB_LOCK_TIMEOUT": "1.5"}
    server = ServerProcess(daphne_argv, env).start()
    yield server
    server.stop()


def test_a_locked_database_answers_503_with_a_message_and_keeps_nothing_half_written(
    locked_server,
):
    base = locked_server.url
    learner = Visitor()
    url, status, _ = learner.post(f"{base}/quiz/", f"{base}/quiz/start/", {})
    attempt = re.search(r"/quiz/a/(\d+)/", url)
    assert attempt, f"no quiz attempt ({status}): {url}"
    attempt = attempt.group(1)
    attempt_url = f"{base}/quiz/a/{attempt}/"
    _, page = learner.get(attempt_url)
    claims = re.findall(r'name="claim" value="([^"]+)"', page)
    assert len(claims) >= 2
    token = learner.token(attempt_url)
    answer_url = f"{base}/quiz/a/{attempt}/answer/"

    with database_locked():
        _, status, body = learner.post(
            attempt_url, answer_url, {"claim": claims[0], "answer": "holds"}, token=token
        )
        assert status == 503, body[-800:]
        assert learner.headers.get("Retry-After") == "5"
        assert "nothing from this request was saved" in body
        _, status, body = learner.post(
            attempt_url, answer_url, {"claim": claims[1], "answer": "costs"}, token=token,
            headers={"Accept": "application/json"},
        )  # fmt: skip
        assert status == 503
        assert '"error": "database_unavailable"' in body
    # Nothing half-written: neither the answer nor the review item it schedules (read once the
    # lock is gone: PostgreSQL's ACCESS EXCLUSIVE blocks this read too).
    assert _stored(attempt, claims[0]) == (0, 0)
    assert _stored(attempt, claims[1]) == (0, 0)

    for claim, said in ((claims[0], "holds"), (claims[1], "costs")):
        _, status, _ = learner.post(attempt_url, answer_url, {"claim": claim, "answer": said},
                                    token=token)  # fmt: skip
        assert status == 200
        assert _stored(attempt, claim) == (1, 1)
    # Sent once more (a learner pressing again after the 503): still one of each.
    learner.post(attempt_url, answer_url, {"claim": claims[0], "answer": "costs"}, token=token)
    assert _stored(attempt, claims[0]) == (1, 1)

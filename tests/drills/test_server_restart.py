"""Drill: the web server is stopped and started again while 50 sockets watch a lab run, a room
of 20 votes on a claim over its sockets, and 5 learners answer quiz items over HTTP.

Clients behave as the pages do: a run page reconnects with ?after=<last id it holds>
(static/js/lab.js), a participant whose vote was not confirmed sends it again once its socket
is back, a quiz answer whose request failed is sent again. Lost: nothing (the run's events live
in its log in Redis and in the database, votes and answers in the database). Checked: every
socket reconnected and holds every receipt once, every vote is stored once with the choice
sent, every quiz answer once with the answer sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import time

import httpx
import pytest

from tests.drills.stack import (
    EventLoopThread,
    RunWatcher,
    fire_run,
    live_rows,
    run_events,
    run_status,
    wait_until,
)
from tests.stack import manage
from tests.support.http import Visitor

pytestmark = [pytest.mark.broker, pytest.mark.slow]

WATCHERS = 50
VOTERS = 20
LEARNERS = 5
ANSWERS = 4  # quiz items each learner answers
TASKS = 30
RESTART_AT = 3.0  # seconds after the run is fired; its tasks fall due from 1 s to 8.25 s
SPACING = 0.25  # seconds between due times: events flow through the restart, none past 10 s

ROOM = """
from django.contrib.auth.models import User
from lessons.catalog import all_questions
from teachlab.workshop import rooms, votes
staff = User.objects.create_user("drill-staff", password="drill-pass-123", is_staff=True)
room = rooms.room_create(instructor=staff, title="Drill room")
claim = next(c for q in all_questions() for c in q.claims)
round_ = votes.claim_open(room=room, claim_key=claim.key)
print(room.code, round_.pk)
"""


class Voter:
    """A participant's page: votes once; resends after a reconnect until the room shows it."""

    def __init__(self, base: str, code: str, round_id: int, n: int) -> None:
        self.visitor = Visitor()
        self.base, self.code, self.round_id = base, code, round_id
        self.nickname = f"voter{n}"
        self.choice = "holds" if n % 2 else "costs"
        self.confirmed = False
        self.sends = 0
        self.attempts = 0
        self.connects = 0

    def join(self) -> None:
        join = f"{self.base}/workshop/join/"
        self.visitor.post(join, join, {"code": self.code, "nickname": self.nickname})
        self.cookie = f"tl_seat_{self.code}={self.visitor.cookie(f'tl_seat_{self.code}')}"

    async def vote(self, after: float) -> None:
        from websockets.asyncio.client import connect

        await asyncio.sleep(after)
        url = self.base.replace("http://", "ws://") + f"/ws/workshop/{self.code}/"
        frame = json.dumps({"action": "vote", "round": str(self.round_id), "choice": self.choice})
        while not self.confirmed:
            self.attempts += 1
            try:
                async with connect(url, additional_headers={"Cookie": self.cookie,
                                   "Origin": self.base}, open_timeout=10) as ws:  # fmt: skip
                    self.connects += 1
                    await ws.send(frame)
                    self.sends += 1
                    async for message in ws:
                        if 'id="ws-myvote"' in message and "Your vote:" in message:
                            self.confirmed = True
                            return
            except Exception:  # noqa: BLE001, S110 - the server is away: try again as the page does
                pass
            await asyncio.sleep(0.5)


class Learner:
    """A quiz page: answers its items one by one, sending again what did not get an answer."""

    def __init__(self, base: str) -> None:
        self.visitor = Visitor()
        self.base = base
        self.sent: dict[str, str] = {}
        self.retries = 0

    def start(self) -> None:
        url, _, _ = self.visitor.post(f"{self.base}/quiz/", f"{self.base}/quiz/start/", {})
        self.attempt = re.search(r"/quiz/a/(\d+)/", url).group(1)
        self.page = f"{self.base}/quiz/a/{self.attempt}/"
        _, html = self.visitor.get(self.page)
        self.claims = re.findall(r'name="claim" value="([^"]+)"', html)[:ANSWERS]
        self.token = self.visitor.token(self.page)

    def answer_all(self, spread: float) -> None:
        for i, claim in enumerate(self.claims):
            time.sleep(spread)
            said = "holds" if i % 2 else "costs"
            while True:
                try:
                    _, status, _ = self.visitor.post(
                        self.page, f"{self.page}answer/", {"claim": claim, "answer": said},
                        token=self.token, timeout=10,
                    )  # fmt: skip
                    if status == 200:
                        break
                except (httpx.HTTPError, OSError):
                    pass
                self.retries += 1
                time.sleep(0.5)
            self.sent[claim] = said


def _problems(log) -> str:
    lines = log.read_text(errors="replace").splitlines()
    keep = [i for i, line in enumerate(lines) if "Traceback" in line or "Error" in line]
    shown = [line for i in keep[:3] for line in lines[i : i + 25]]
    return "\n".join(shown) or "\n".join(lines[-20:])


async def _all(coros) -> None:
    await asyncio.gather(*coros)


def test_the_server_restarted_under_50_watchers_a_vote_and_a_quiz_loses_and_doubles_nothing(
    drill_stack,
):
    server = drill_stack.server
    base = server.url
    code, round_id = manage("shell", "-c", ROOM, **drill_stack.env).stdout.split()[-2:]
    voters = [Voter(base, code, int(round_id), n) for n in range(VOTERS)]
    for v in voters:
        v.join()
    learners = [Learner(base) for _ in range(LEARNERS)]
    for learner in learners:
        learner.start()
    owner = Visitor()
    run = fire_run(base, owner, count=TASKS, countdown=1, spacing=SPACING)
    fired = time.monotonic()

    loop = EventLoopThread()
    watchers = [RunWatcher(base, run, owner.cookie("sessionid")) for _ in range(WATCHERS)]
    for w in watchers:
        loop.loop.call_soon_threadsafe(w.start)
    answering = [
        threading.Thread(target=lr.answer_all, args=(1.5,), daemon=True) for lr in learners
    ]
    try:
        wait_until(lambda: all(w.connects for w in watchers), timeout=30, what="50 sockets open")
        # Votes and answers spread over the seconds before, during and after the restart.
        votes_done = asyncio.run_coroutine_threadsafe(
            _all(v.vote(after=0.35 * n) for n, v in enumerate(voters)), loop.loop
        )
        for t in answering:
            t.start()
        time.sleep(max(0.5, RESTART_AT - (time.monotonic() - fired)))
        started = time.monotonic()
        server.stop()
        time.sleep(1)
        server.start()
        print(f"\nserver away for {time.monotonic() - started:.1f} s")
        try:
            wait_until(lambda: all(w.connects >= 2 for w in watchers), timeout=40,
                       what="every socket reconnected")  # fmt: skip
        except AssertionError as exc:
            back = sum(w.connects >= 2 for w in watchers)
            errors = {w.error for w in watchers if w.connects < 2}
            from tests import stack as _stack

            if _stack.live_database_url():
                errors.add(str(live_rows(
                    "SELECT pid, state, wait_event_type, wait_event, left(query, 90), "
                    "now() - xact_start FROM pg_stat_activity WHERE datname = current_database()"
                )))  # fmt: skip
            import signal as _signal

            os.kill(server.proc.pid, _signal.SIGABRT)  # PYTHONFAULTHANDLER: every thread's stack
            time.sleep(2)
            stacks = server.log.read_text(errors="replace").split("Fatal Python error")[-1]
            raise AssertionError(
                f"{exc}: {back} of {WATCHERS} back; errors {errors}\n{stacks[-6000:]}"
            ) from None
        votes_done.result(timeout=60)
        for t in answering:
            t.join(timeout=60)
        wait_until(lambda: run_status(run) == "done", timeout=60, what="the run settling")
        wait_until(lambda: all(w.done for w in watchers), timeout=30, what="every page told")
    finally:
        for w in watchers:
            loop.call(w.close())
        loop.close()

    events = run_events(run)
    receipts = sorted(seq for seq, kind, *_ in events if kind == "received")
    assert len(receipts) >= TASKS
    for w in watchers:
        assert w.connects >= 2
        assert not w.doubled, w.doubled
        assert sorted(w.rows.values()) == receipts  # every receipt, once
        assert set(w.outcomes.values()) == {"executed"} and len(w.outcomes) == len(receipts)

    stored_votes = dict(
        live_rows(
            "SELECT s.nickname, v.choice FROM workshop_vote v "
            "JOIN workshop_seat s ON s.id = v.seat_id WHERE v.round_id = ?",
            (int(round_id),),
        )
    )
    # The restart got in the way of some votes and answers (else this proved nothing)...
    assert sum(v.attempts for v in voters) > VOTERS
    assert sum(learner.retries for learner in learners) > 0
    # ...and still every vote is stored once, with the choice sent.
    assert all(v.confirmed for v in voters)
    assert stored_votes == {v.nickname: v.choice for v in voters}
    assert sum(v.sends for v in voters) >= VOTERS

    for learner in learners:
        rows = live_rows(
            "SELECT claim_key, said_holds FROM lessons_quizanswer WHERE attempt_id = ?",
            (int(learner.attempt),),
        )
        assert len(rows) == len(learner.sent) == ANSWERS, rows
        assert {k: bool(h) for k, h in rows} == {
            k: said == "holds" for k, said in learner.sent.items()
        }

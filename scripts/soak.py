#!/usr/bin/env python
"""Soak a running server (issue 14, item 3): N clients for a duration doing what a class does
(page loads, quiz answers, reviews, a workshop join, votes, predictions, watching lab runs
over WebSockets), then: errors, lost answers (answers the server acknowledged against the rows
stored), p95 page time, and the server's CPU and memory (psutil on its processes).

Not a test. Run it beside the production server, with the same TEACHLAB_* and DATABASE_URL
environment (it creates an instructor, a room and the room's runs in that database, and
counts what was stored there), for example:

    .venv/bin/python manage.py migrate && scripts/serve &        # the server under test
    .venv/bin/python scripts/soak.py --url http://127.0.0.1:8000 --clients 300 --duration 300 --json

Lab runs need lab workers on the room's lane (scripts/run starts them; so does compose). The
clients are one asyncio process; its own CPU use is reported beside the server's. The headline
figures and the whole report go to docs/measurements/results/ as a JSON result (soak-<clients>;
teachlab/core/measurements.py; `--out DIR` for elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import resource
import statistics
import sys
import threading
import time
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "teachlab.settings")

import django  # noqa: E402

django.setup()

import psutil  # noqa: E402
from asgiref.sync import sync_to_async  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import WebSocketException  # noqa: E402

from teachlab.core.measurements import Measurement, out_option_add  # noqa: E402
from teachlab.core.percentiles import percentiles_ms  # noqa: E402

CLAIM = re.compile(r'name="claim" value="([^"]+)"')
WS_ERROR = re.compile(r'id="ws-error"[^>]*>([^<]*)</p>')
LIVE_STATUS = re.compile(r'id="live-status"[^>]*>([^<]*)</p>')
# What a client meets when the server or the network fails it: counted as errors.
NETWORK = (TimeoutError, OSError, asyncio.IncompleteReadError, WebSocketException, ValueError)
STILL_GOING = ("Live: connected.", "Connecting", "Replaying")


# --- a small keep-alive HTTP/1.1 client (no third-party HTTP library in requirements) ---------


class Http:
    """One browser: a keep-alive connection, its cookies, the CSRF token."""

    def __init__(self, base: str) -> None:
        parts = urllib.parse.urlsplit(base)
        self.host, self.port = parts.hostname, parts.port or 80
        self.cookies: dict[str, str] = {}
        self.reader = self.writer = None

    def cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    async def _connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def request(self, method: str, path: str, data: dict | None = None, htmx=False):
        """(status, headers, body). A kept-alive connection the server closed meanwhile is
        opened again once; the request had not reached the server."""
        for attempt in (1, 2):
            reused = self.writer is not None
            if not reused:
                await self._connect()
            try:
                return await self._exchange(method, path, data, htmx)
            except (ConnectionError, asyncio.IncompleteReadError) as exc:
                self.close()
                if not reused or attempt == 2 or getattr(exc, "partial", b""):
                    raise
        raise AssertionError("unreachable")

    async def _exchange(self, method, path, data, htmx):
        body = urllib.parse.urlencode(data or {}).encode()
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        if self.cookies:
            lines.append(f"Cookie: {self.cookie_header()}")
        if method == "POST":
            lines += [
                "Content-Type: application/x-www-form-urlencoded",
                f"Content-Length: {len(body)}",
                f"X-CSRFToken: {self.cookies.get('csrftoken', '')}",
            ]
        if htmx:
            lines.append("HX-Request: true")
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await self.writer.drain()
        status_line = await self.reader.readuntil(b"\r\n")
        status = int(status_line.split()[1])
        headers: dict[str, str] = {}
        while True:
            line = (await self.reader.readuntil(b"\r\n")).decode("latin-1").strip()
            if not line:
                break
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "set-cookie":
                key, _, rest = value.partition("=")
                cookie_value = rest.split(";", 1)[0]
                if cookie_value in ('""', "") or "max-age=0" in value.lower():
                    self.cookies.pop(key, None)
                else:
                    self.cookies[key] = cookie_value
            headers[name] = value
        if "content-length" in headers:
            payload = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            payload = b""
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                payload += chunk[:-2]
        else:
            payload = await self.reader.read()
            self.close()
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, payload


# --- what was sent, acknowledged and timed --------------------------------------------------


@dataclass
class Tally:
    times: dict[str, list[float]] = field(default_factory=lambda: {})
    errors: Counter = field(default_factory=Counter)
    error_samples: list[str] = field(default_factory=list)
    refused: Counter = field(default_factory=Counter)  # a clear 4xx or socket refusal
    answers: set = field(default_factory=set)  # (attempt id, claim key) acknowledged
    votes: set = field(default_factory=set)  # (nickname, round id) acknowledged
    guesses: set = field(default_factory=set)  # (nickname, shared run id) acknowledged
    actions: Counter = field(default_factory=Counter)
    runs_fired: int = 0
    runs_watched_to_end: int = 0
    frames_received: int = 0
    presenter_rounds: int = 0  # rounds the instructor's socket drove (fire, reveal, claim)

    def time(self, kind: str, seconds: float) -> None:
        self.times.setdefault(kind, []).append(seconds)

    def error(self, kind: str, detail: str) -> None:
        self.errors[kind] += 1
        if len(self.error_samples) < 20:
            self.error_samples.append(f"{kind}: {detail[:300]}")


@dataclass
class Room:
    code: str = ""
    pk: int = 0
    round_id: int = 0
    shared_id: int = 0
    slugs: list[str] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)
    instructor_cookie: str = ""


# --- the room and its instructor, made in the server's database -------------------------------


def room_prepare(lane: str) -> Room:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from lessons.catalog import all_questions
    from teachlab.workshop import rooms, votes

    user, _ = get_user_model().objects.get_or_create(
        username="soak-instructor", defaults={"is_staff": True}
    )
    client = Client()
    client.force_login(user)
    room = rooms.room_create(instructor=user, title=f"Soak {time.strftime('%H:%M:%S')}")
    questions = [q for q in all_questions() if q.claims]
    claims = [c.key for q in questions for c in q.claims]
    claim_round = votes.claim_open(room=room, claim_key=random.choice(claims))
    shared = _shared_open(room, lane)
    return Room(
        code=room.code,
        pk=room.pk,
        round_id=claim_round.pk,
        shared_id=shared.pk,
        slugs=[q.slug for q in questions],
        claims=claims,
        instructor_cookie=f"sessionid={client.cookies['sessionid'].value}",
    )


def _shared_open(room, lane: str):
    from teachlab.workshop import predictions

    return predictions.shared_run_open(
        room=room, lane=lane, params={"count": 5, "countdown": 3}, metric="receipts"
    )


def _latest_round(room_pk: int) -> int:
    from teachlab.workshop.models import ClaimRound

    return ClaimRound.objects.filter(room_id=room_pk).latest("opened_at").pk


def stored_counts(room: Room, tally: Tally) -> dict:
    """Rows stored against what the server acknowledged: lost = acknowledged, not stored."""
    from lessons.models import QuizAnswer
    from teachlab.workshop.models import Prediction, Vote

    attempts = {a for a, _ in tally.answers}
    answers = set(
        QuizAnswer.objects.filter(attempt_id__in=attempts).values_list("attempt_id", "claim_key")
    )
    votes = set(
        Vote.objects.filter(seat__room_id=room.pk).values_list("seat__nickname", "round_id")
    )
    guesses = set(
        Prediction.objects.filter(seat__room_id=room.pk).values_list(
            "seat__nickname", "shared_run_id"
        )
    )
    return {
        "quiz_answers": _compare(tally.answers, answers),
        "votes": _compare(tally.votes, votes),
        "predictions": _compare(tally.guesses, guesses),
    }


def _compare(sent: set, stored: set) -> dict:
    return {"acknowledged": len(sent), "stored": len(stored & sent), "lost": len(sent - stored)}


# --- the class --------------------------------------------------------------------------------


class Learner:
    def __init__(self, n: int, args, room: Room, tally: Tally, deadline: float) -> None:
        self.n, self.args, self.room, self.tally, self.deadline = n, args, room, tally, deadline
        self.http = Http(args.url)
        self.nickname = f"soak{n}-{random.randrange(10**6)}"
        self.ws = None
        self.acks: asyncio.Queue = asyncio.Queue()
        self.attempt: int | None = None
        self.open_claims: list[str] = []
        self.watcher = n < args.clients * args.lab_share

    async def get(self, path: str, kind: str = "page"):
        started = time.perf_counter()
        status, headers, body = await self.http.request("GET", path)
        elapsed = time.perf_counter() - started
        self.tally.time(kind, elapsed)
        # Per page too, ids and slugs folded, so a slow page shows by name.
        self.tally.time(f"{kind} {re.sub(r'/(?:q|r|a|runs)/[^/]+', '/…', path)}", elapsed)
        if status >= 400:
            self.tally.error(f"GET {status}", path)
        return status, headers, body

    async def post(self, path: str, data: dict, kind: str, htmx=False, ok=(200, 302)):
        started = time.perf_counter()
        status, headers, body = await self.http.request("POST", path, data, htmx)
        self.tally.time(kind, time.perf_counter() - started)
        if status >= 500 or status == 403:
            self.tally.error(f"POST {status}", f"{path} {body[:200]!r}")
        elif status not in ok:
            self.tally.refused[kind] += 1
        return status, headers, body

    async def run(self) -> None:
        try:
            await self.get("/")
            await self.join()
            actions = [self.page, self.quiz, self.quiz, self.review, self.vote, self.predict]
            if self.watcher:
                actions.append(self.watch_own_run)
            while time.monotonic() < self.deadline:
                await asyncio.sleep(random.expovariate(1 / self.args.think))
                if time.monotonic() >= self.deadline:
                    break
                action = random.choice(actions)
                self.tally.actions[action.__name__] += 1
                try:
                    await action()
                except NETWORK as exc:
                    self.tally.error(f"{action.__name__} {type(exc).__name__}", str(exc))
                    self.http.close()
        except NETWORK as exc:
            self.tally.error(f"start {type(exc).__name__}", str(exc))
        finally:
            if self.ws is not None:
                await self.ws.close()
            self.http.close()

    async def join(self) -> None:
        status, headers, _ = await self.post(
            "/workshop/join/", {"code": self.room.code, "nickname": self.nickname}, "join"
        )
        if status != 302:
            self.tally.error("join", f"status {status}")
            return
        await self.get(headers.get("location", f"/workshop/r/{self.room.code}/"))
        await self._socket_open()

    async def _socket_open(self) -> None:
        """The room socket (again), with a queue of its own for the answers to our frames."""
        if self.ws is not None:
            old, self.ws = self.ws, None
            await old.close()
        self.acks = asyncio.Queue()
        ws_url = self.args.url.replace("http", "ws", 1) + f"/ws/workshop/{self.room.code}/"
        self.ws = await connect(
            ws_url,
            additional_headers={"Cookie": self.http.cookie_header(), "Origin": self.args.url},
            open_timeout=20,
            max_size=None,
        )
        # The room as it stands is this socket's first frame of its own, and it carries the
        # (empty) #ws-error slot; a room broadcast can arrive before it. Read up to it: left in
        # the queue it was taken for the answer to the next vote, and every answer after came
        # one frame late (refused votes counted as acknowledged, then as "lost").
        while 'id="ws-error"' not in await self.ws.recv():
            self.tally.frames_received += 1
        asyncio.ensure_future(self.listen(self.ws, self.acks))

    async def listen(self, ws, acks: asyncio.Queue) -> None:
        """Every frame the room sends (broadcasts, the run's receipts); answers to our own
        frames (they carry #ws-error) go to the queue."""
        try:
            async for frame in ws:
                self.tally.frames_received += 1
                if 'id="ws-error"' in frame:
                    await acks.put(frame)
        except Exception as exc:  # noqa: BLE001 - a socket dropped is an error to report
            if time.monotonic() < self.deadline and ws is self.ws:
                self.tally.error("room socket closed", repr(exc))

    async def page(self) -> None:
        slug = random.choice(self.room.slugs)
        path = random.choice(
            [
                "/",
                f"/q/{slug}/",
                f"/q/{slug}/{random.choice(['basics', 'solid', 'senior'])}/",
                "/quiz/",
                "/progress/",
                "/lab/",
                f"/workshop/r/{self.room.code}/",
            ]
        )
        await self.get(path)

    async def quiz(self) -> None:
        if not self.open_claims:
            question = random.choice(self.room.slugs + [""])
            status, headers, _ = await self.post("/quiz/start/", {"question": question}, "quiz")
            match = re.search(r"/quiz/a/(\d+)/", headers.get("location", ""))
            if status != 302 or not match:
                return
            self.attempt = int(match.group(1))
            _, _, body = await self.get(f"/quiz/a/{self.attempt}/")
            self.open_claims = CLAIM.findall(body.decode())
            return
        claim = self.open_claims.pop()
        answer = random.choice(["holds", "costs"])
        status, _, _ = await self.post(
            f"/quiz/a/{self.attempt}/answer/",
            {"claim": claim, "answer": answer},
            "answer",
            htmx=True,
            ok=(200,),
        )
        if status == 200:
            self.tally.answers.add((self.attempt, claim))

    async def review(self) -> None:
        await self.get("/review/")
        if random.random() < 0.3:
            await self.post("/review/quiz/", {}, "review")  # 4xx when nothing is due yet

    async def _frame(self, kind: str, frame: dict) -> str | None:
        if self.ws is None:
            return None
        started = time.perf_counter()
        await self.ws.send(json.dumps(frame))
        try:
            reply = await asyncio.wait_for(self.acks.get(), timeout=15)
        except TimeoutError:
            # Its answer may still come, and would then be taken as the answer to the next
            # frame (a refused vote counted as acknowledged, then "lost"): a new socket.
            await self._socket_open()
            raise
        self.tally.time(kind, time.perf_counter() - started)
        match = WS_ERROR.search(reply)
        if match and match.group(1).strip():
            self.tally.refused[kind] += 1  # e.g. the claim was revealed a moment ago
            return None
        return reply

    async def vote(self) -> None:
        round_id = self.room.round_id
        frame = {
            "action": "vote",
            "round": str(round_id),
            "choice": random.choice(["holds", "costs"]),
        }
        if await self._frame("vote", frame):
            self.tally.votes.add((self.nickname, round_id))

    async def predict(self) -> None:
        shared = self.room.shared_id
        frame = {"action": "predict", "run": str(shared), "value": str(random.randrange(1, 20))}
        if await self._frame("predict", frame):
            self.tally.guesses.add((self.nickname, shared))

    async def watch_own_run(self) -> None:
        """Fire a small run from the lab page and watch it over the run socket to its end."""
        status, headers, body = await self.post(
            "/lab/", {"lane": self.args.lane, "countdown": "2", "count": "1"}, "fire"
        )
        match = re.search(r"/lab/runs/([A-Za-z0-9_-]+)/", headers.get("location", ""))
        if status != 302 or not match:
            return
        self.tally.runs_fired += 1
        await self.get(headers["location"])
        ws_url = self.args.url.replace("http", "ws", 1) + f"/ws/lab/runs/{match.group(1)}/"
        async with connect(
            ws_url,
            additional_headers={"Cookie": self.http.cookie_header(), "Origin": self.args.url},
            open_timeout=20,
            max_size=None,
        ) as ws:
            end = time.monotonic() + 60
            while time.monotonic() < end:
                try:
                    frame = await asyncio.wait_for(
                        ws.recv(), timeout=max(0.1, end - time.monotonic())
                    )
                except TimeoutError:
                    break
                self.tally.frames_received += 1
                # A redraw frame can carry two statuses ("Live: connected.", then "Run
                # finished" for a run already over); the page keeps the last, so do we.
                statuses = LIVE_STATUS.findall(frame)
                if statuses and not statuses[-1].startswith(STILL_GOING):
                    self.tally.runs_watched_to_end += 1
                    return
        self.tally.error("run not finished within 60 s", match.group(1))


async def instructor(args, room: Room, tally: Tally, deadline: float) -> None:
    """The presenter screen: a new claim and a new run to predict every round, the run fired
    two thirds into the round so the room watches it."""
    ws_url = args.url.replace("http", "ws", 1) + f"/ws/workshop/{room.code}/present/"
    async with connect(
        ws_url,
        additional_headers={"Cookie": room.instructor_cookie, "Origin": args.url},
        open_timeout=20,
        max_size=None,
    ) as ws:
        replies: asyncio.Queue = asyncio.Queue()

        async def drain() -> None:
            async for frame in ws:
                if 'id="ws-error"' in frame:
                    await replies.put(frame)

        asyncio.ensure_future(drain())

        async def send(frame: dict) -> None:
            await ws.send(json.dumps(frame))
            reply = await asyncio.wait_for(replies.get(), timeout=30)
            match = WS_ERROR.search(reply)
            if match and match.group(1).strip():
                tally.refused[f"presenter {frame['action']}"] += 1

        while time.monotonic() < deadline:
            await asyncio.sleep(min(args.round * 2 / 3, max(0, deadline - time.monotonic())))
            if time.monotonic() >= deadline:
                break
            await send({"action": "fire"})
            await asyncio.sleep(min(args.round / 3, max(0, deadline - time.monotonic())))
            if time.monotonic() >= deadline:
                break
            await send({"action": "reveal"})
            await send({"action": "claim", "claim": random.choice(room.claims)})
            tally.presenter_rounds += 1
            room.round_id = await sync_to_async(_latest_round)(room.pk)
            room.shared_id = (await sync_to_async(_shared_reopen)(room.pk, args.lane)).pk


def _shared_reopen(room_pk: int, lane: str):
    from teachlab.workshop.models import Room as RoomModel

    return _shared_open(RoomModel.objects.get(pk=room_pk), lane)


# --- the server's processes -------------------------------------------------------------------


def server_processes(url: str, pid: int | None) -> list[psutil.Process]:
    """The given process and its children; else whatever listens on the URL's port, and the
    gunicorn master above it with all its workers."""
    if pid is None:
        port = urllib.parse.urlsplit(url).port or 80
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr.port == port and conn.pid:
                pid = conn.pid
                break
    if pid is None:
        return []
    top = psutil.Process(pid)
    parent = top.parent()
    if parent is not None and "gunicorn" in " ".join(parent.cmdline()):
        top = parent
    return [top, *top.children(recursive=True)]


class Sampler(threading.Thread):
    """CPU (percent of one core, summed over the server's processes) and RSS once a second."""

    def __init__(self, procs: list[psutil.Process]) -> None:
        super().__init__(daemon=True)
        self.procs, self.cpu, self.rss = procs, [], []
        self.stopping = threading.Event()

    def run(self) -> None:
        for p in self.procs:
            p.cpu_percent(None)
        while not self.stopping.wait(1.0):
            cpu = rss = 0.0
            for p in self.procs:
                try:
                    cpu += p.cpu_percent(None)
                    rss += p.memory_info().rss
                except psutil.Error:
                    continue
            self.cpu.append(cpu)
            self.rss.append(rss / 2**20)


# --- main -------------------------------------------------------------------------------------


async def soak(args) -> dict:
    room = await sync_to_async(room_prepare)(args.lane)
    tally = Tally()
    procs = server_processes(args.url, args.server_pid)
    sampler = Sampler(procs)
    sampler.start()
    started = time.monotonic()
    deadline = started + args.duration
    learners = [Learner(n, args, room, tally, deadline) for n in range(args.clients)]
    tasks = []
    for learner in learners:  # arrive over the first few seconds, as a class does
        tasks.append(asyncio.ensure_future(learner.run()))
        await asyncio.sleep(args.ramp / max(1, args.clients))
    presenter = asyncio.ensure_future(instructor(args, room, tally, deadline))
    await asyncio.gather(*tasks, return_exceptions=False)
    # The instructor's socket failing is an error like any other (a session signed with
    # another TEACHLAB_SECRET_KEY than the server's is refused at the handshake, and then no
    # round is driven: the class only votes on the first claim).
    if presenter.done() and not presenter.cancelled() and presenter.exception() is not None:
        exc = presenter.exception()
        tally.error(f"presenter {type(exc).__name__}", str(exc))
    presenter.cancel()
    elapsed = time.monotonic() - started
    sampler.stopping.set()
    sampler.join(timeout=5)
    await asyncio.sleep(1)  # the last acknowledged writes are committed before the reply
    stored = await sync_to_async(stored_counts)(room, tally)
    own = resource.getrusage(resource.RUSAGE_SELF)
    pages = tally.times.get("page", [])
    return {
        "url": args.url,
        "clients": args.clients,
        "duration_s": round(elapsed, 1),
        "room": room.code,
        "errors": sum(tally.errors.values()),
        "errors_by_kind": dict(tally.errors),
        "error_samples": tally.error_samples,
        "refused_by_kind": dict(tally.refused),
        "lost": sum(v["lost"] for v in stored.values()),
        "stored": stored,
        "actions": dict(tally.actions),
        "page_loads": len(pages),
        "page_ms": percentiles_ms(pages, qs=(0.5, 0.95), ndigits=1),
        "ms_by_kind": {
            kind: {"n": len(v), **percentiles_ms(v, qs=(0.5, 0.95), ndigits=1)}
            for kind, v in sorted(tally.times.items())
        },
        "runs_fired": tally.runs_fired,
        "runs_watched_to_end": tally.runs_watched_to_end,
        "presenter_rounds": tally.presenter_rounds,
        "socket_frames_received": tally.frames_received,
        "server": {
            "processes": len(procs),
            "cpu_pct_mean": round(statistics.fmean(sampler.cpu), 1) if sampler.cpu else None,
            "cpu_pct_max": round(max(sampler.cpu), 1) if sampler.cpu else None,
            "rss_mb_max": round(max(sampler.rss), 1) if sampler.rss else None,
        },
        "client_cpu_s": round(own.ru_utime + own.ru_stime, 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def _figures(report: dict) -> dict:
    """The result file's figures: the headline counts and times, and the whole report as detail."""
    return {
        "errors": report["errors"],
        "lost": report["lost"],
        "page_loads": report["page_loads"],
        **{f"page_{key}_ms": value for key, value in report["page_ms"].items()},
        "server_cpu_pct_mean": report["server"]["cpu_pct_mean"],
        "server_rss_mb_max": report["server"]["rss_mb_max"],
        "detail": report,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--clients", type=int, default=300)
    parser.add_argument("--duration", type=float, default=300, help="seconds (default 5 min)")
    parser.add_argument("--think", type=float, default=3.0, help="mean seconds between actions")
    parser.add_argument(
        "--ramp", type=float, default=10.0, help="seconds over which clients arrive"
    )
    parser.add_argument("--round", type=float, default=60.0, help="seconds per claim and run")
    parser.add_argument("--lane", default="redis-short")
    parser.add_argument(
        "--lab-share", type=float, default=0.1, help="clients who fire and watch runs"
    )
    parser.add_argument("--server-pid", type=int, help="default: whatever listens on --url's port")
    parser.add_argument("--json", action="store_true")
    out_option_add(parser)
    args = parser.parse_args()
    args.url = args.url.rstrip("/")
    measurement = Measurement(
        f"soak-{args.clients}", goal="0 errors and 0 lost answers (acknowledged, not stored)"
    )
    report = asyncio.run(soak(args))
    saved = measurement.save(_figures(report), out=args.out)
    print(f"result: {saved}", file=sys.stderr)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(
            f"{report['clients']} clients, {report['duration_s']} s: {report['errors']} errors, "
            f"{report['lost']} lost; {report['page_loads']} page loads, p95 "
            f"{report['page_ms']['p95']} ms; server CPU mean {report['server']['cpu_pct_mean']}% "
            f"max {report['server']['cpu_pct_max']}%, RSS max {report['server']['rss_mb_max']} MB"
        )
        for name, counts in report["stored"].items():
            print(f"  {name}: {counts}")
        for sample in report["error_samples"]:
            print(f"  error {sample}")
    sys.exit(1 if report["errors"] or report["lost"] else 0)


if __name__ == "__main__":
    main()

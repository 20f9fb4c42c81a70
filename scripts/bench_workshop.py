#!/usr/bin/env python
"""Benchmark a workshop room: N participants join through the join form, hold a WebSocket each,
and go through a session plan stepped with the console's Next (a follow, a timed claim vote, a
shared lab run, the leaderboard, the podium), with the instructor's console and the projector
view watching; against a running stack (not a test).

For every broadcast it reports how long until each client holds it (p50, p95, max over
clients); for each join, the form's POST; for presence, how long until the console and the
projector count everyone; for the timed vote, the timer line on every screen, each voter's own
confirmation, and late votes refused once time is up. Then the server's CPU and memory (psutil
on the process that listens on the port), and whether every client was served within 1 s.

Run it with the same TEACHLAB_* environment as the stack (it creates the room, the seats and
an instructor session in that database), for example:

    scripts/run &                                   # or any running stack
    .venv/bin/python scripts/bench_workshop.py --url http://127.0.0.1:8000 --clients 300 --tasks 200

The clients are one asyncio process on the same machine as the server, so their own CPU
competes with the server's; the script prints its own CPU use beside the server's. The slowest
client of each phase and the verdict go to docs/measurements/results/ as a JSON result
(bench-workshop-<clients>; teachlab/core/measurements.py; `--out DIR` for elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import http.cookiejar
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
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "teachlab.settings")

import django  # noqa: E402

django.setup()

import psutil  # noqa: E402
from asgiref.sync import sync_to_async  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client as HttpClient  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402

from lessons.catalog import all_questions  # noqa: E402
from teachlab.core.measurements import Measurement, out_option_add  # noqa: E402
from teachlab.core.percentiles import percentiles_ms  # noqa: E402
from teachlab.workshop import planrun, rooms  # noqa: E402
from teachlab.workshop.models import ClaimRound, Plan, Room  # noqa: E402

SEQ = re.compile(r'data-seq="(\d+)"')
GOALS = {300: "every client within 1 s in every phase (300 participants, PostgreSQL)"}
# What each broadcast looks like in a frame: (marker name, substrings that must all appear).
MARKERS = {
    "follow": ('id="ws-stage"', 'data-tier="solid"'),
    "claim": ('id="ws-claim"', 'data-state="open"'),
    "timer": ('id="ws-claimtimer"', "Votes close in"),
    "vote-ack": ('id="ws-myvote"', "Your vote: <strong>"),
    "late-refused": ('id="ws-error"', "Time is up"),
    "reveal": ('id="ws-claim"', 'data-state="revealed"'),
    "run-open": ('id="ws-run"', 'data-state="open"'),
    "predict-ack": ('id="ws-myprediction"', "Your prediction: <strong>"),
    "fire": ('id="ws-run"', 'data-state="fired"'),
    "outcome": ('id="ws-outcome"', 'class="observed"'),
    "board": ('id="ws-leaderboard"', 'data-shown="yes"'),
    "podium": ('id="ws-moment"', 'data-moment="podium"'),
}


@dataclass
class Participant:
    name: str
    ws: object = None
    marks: dict[str, float] = field(default_factory=dict)
    sent: dict[str, float] = field(default_factory=dict)
    seqs: dict[int, float] = field(default_factory=dict)
    frames: int = 0
    bytes: int = 0
    error: str = ""
    watches: dict[str, str] = field(default_factory=dict)  # more substrings to time, by name

    async def read(self) -> None:
        try:
            async for frame in self.ws:
                now = time.time()
                self.frames += 1
                self.bytes += len(frame)
                for name, needles in MARKERS.items():
                    if name not in self.marks and all(n in frame for n in needles):
                        self.marks[name] = now
                for name, needle in self.watches.items():
                    if name not in self.marks and needle in frame:
                        self.marks[name] = now
                if "data-seq" in frame:
                    for seq in SEQ.findall(frame):
                        self.seqs.setdefault(int(seq), now)
        except Exception as exc:  # noqa: BLE001 - a dropped client shows up as missing marks
            self.error = repr(exc)


class Sampler(threading.Thread):
    """The server process's CPU and memory, sampled while a phase runs."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.proc = psutil.Process(pid)
        self.me = psutil.Process()
        self.rss_peak = 0
        self.stop_flag = threading.Event()

    def run(self) -> None:
        while not self.stop_flag.is_set():
            try:
                self.rss_peak = max(self.rss_peak, self.proc.memory_info().rss)
            except psutil.Error:
                return
            time.sleep(0.1)

    def cpu(self) -> tuple[float, float]:
        a, b = self.proc.cpu_times(), self.me.cpu_times()
        return a.user + a.system, b.user + b.system


def server_pid(port: int) -> int:
    for conn in psutil.net_connections(kind="tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr.port == port and conn.pid:
            return conn.pid
    sys.exit(f"no process listens on port {port}: start the stack first (scripts/run)")


def setup(args):
    """A staff instructor, a session plan and a room started from it, straight in the stack's
    database (the seats come through the join form). The console steps the plan with Next
    (issue 28): the tier, the claim vote, the shared run, the leaderboard, then the podium."""
    user, _ = get_user_model().objects.get_or_create(username="bench-instructor")
    user.is_staff = True
    user.save()
    question = next(q for q in all_questions() if q.claims)
    steps = [
        {"kind": "tier", "question": question.slug, "tier": "solid"},
        {"kind": "claim", "claim": question.claims[0].key},
        {
            "kind": "run",
            "lane": args.lane,
            "params": {"count": args.tasks, "countdown": args.countdown},
            "metric": "receipts",
        },
        {"kind": "leaderboard"},
    ]
    plan = Plan.objects.create(owner=user, title="Benchmark plan", steps=steps)
    title = f"Benchmark {time.strftime('%H:%M:%S')}"
    room = planrun.room_from_plan(instructor=user, plan=plan, title=title)
    client = HttpClient()
    client.force_login(user)
    return room, client.cookies["sessionid"].value, question


def join(url: str, code: str, nickname: str) -> tuple[str, float]:
    """One participant through the join form as a browser does it (the page, then the POST);
    returns the seat's token and the POST's seconds."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = f"{url}/workshop/join/?code={code}"
    opener.open(page, timeout=60).read()
    csrf = next(c.value for c in jar if c.name == "csrftoken")
    form = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": csrf, "code": code, "nickname": nickname}
    ).encode()
    t0 = time.time()
    request = urllib.request.Request(f"{url}/workshop/join/", data=form, headers={"Referer": page})  # noqa: S310
    opener.open(request, timeout=60).read()
    took = time.time() - t0
    token = next((c.value for c in jar if c.name == rooms.seat_cookie_name(code)), None)
    if token is None:
        sys.exit(f"{nickname} could not join room {code}")
    return token, took


def presenter_post(url: str, code: str, session: str, action: str, fields: dict) -> None:
    """A presenter's htmx POST, as the browser sends it (session cookie and CSRF token)."""
    page = f"{url}/workshop/r/{code}/present/"
    request = urllib.request.Request(page, headers={"Cookie": f"sessionid={session}"})  # noqa: S310
    with urllib.request.urlopen(request) as response:  # noqa: S310 - the stack's own URL
        body = response.read().decode()
    csrf = re.search(r'"X-CSRFToken": "([^"]+)"', body).group(1)
    cookie = response.headers.get_all("Set-Cookie") or []
    csrf_cookie = next(
        (c.split(";")[0].split("=", 1)[1] for c in cookie if c.startswith("csrftoken=")), csrf
    )
    request = urllib.request.Request(  # noqa: S310 - http(s) only, checked in main()
        f"{url}/workshop/r/{code}/{action}/",
        data=urllib.parse.urlencode(fields).encode(),
        headers={
            "Cookie": f"sessionid={session}; csrftoken={csrf_cookie}",
            "X-CSRFToken": csrf,
            "HX-Request": "true",
            "Referer": page,
        },
    )
    with urllib.request.urlopen(request) as response:  # noqa: S310
        answer = response.read().decode()
    refused = re.search(r'id="ws-error"[^>]*>([^<]+)<', answer)
    if refused:
        sys.exit(f"the server refused the {action}: {refused.group(1)}")


async def open_socket(url: str, path: str, cookie: str):
    ws_url = url.replace("http", "ws", 1) + path
    return await connect(
        ws_url,
        origin=url,
        additional_headers={"Cookie": cookie},
        max_size=None,
        open_timeout=60,
        ping_interval=None,
        compression=None,
    )


async def wait_marks(clients: list[Participant], name: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(name in c.marks for c in clients):
            return
        await asyncio.sleep(0.02)


def row(name: str, latencies: list[float], total: int) -> str:
    got = len(latencies)
    ms = percentiles_ms(latencies, qs=(0.5, 0.95), ndigits=0)
    cells = " | ".join("-" if v is None else f"{v:.0f}" for v in ms.values())
    return f"| {name} | {got}/{total} | {cells} |"


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--clients", type=int, default=300)
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--lane", default="redis-short")
    ap.add_argument("--countdown", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--vote-seconds", type=int, default=15, help="the claim vote's timer")
    ap.add_argument(
        "--spread",
        type=float,
        default=0,
        help="seconds over which the votes and the predictions arrive (0: all at once)",
    )
    out_option_add(ap)
    args = ap.parse_args()
    measurement = Measurement(f"bench-workshop-{args.clients}", goal=GOALS.get(args.clients))
    if not args.url.startswith(("http://", "https://")):
        sys.exit("--url must be an http:// or https:// address")

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, args.clients * 2 + 256))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    port = int(args.url.rsplit(":", 1)[1].split("/")[0])
    pid = server_pid(port)
    sampler = Sampler(pid)
    sampler.start()

    room, session, question = await sync_to_async(setup)(args)
    print(f"room {room.code}, server pid {pid}", flush=True)
    load_before = os.getloadavg()[0]
    n = args.clients
    results: list[str] = []
    slowest: dict[str, float] = {}  # phase -> its slowest client, seconds

    # The instructor's console and the projector view are open before anyone joins.
    presenter = Participant("presenter")
    presenter.ws = await open_socket(
        args.url, f"/ws/workshop/{room.code}/present/", f"sessionid={session}"
    )
    screen = Participant("screen")
    screen.ws = await open_socket(
        args.url, f"/ws/workshop/{room.code}/screen/", f"sessionid={session}"
    )
    everyone_here = f'<strong class="present-count">{n}</strong> connected'
    presenter.watches["presence"] = screen.watches["presence"] = everyone_here
    readers = [asyncio.create_task(presenter.read()), asyncio.create_task(screen.read())]

    # Joins: through the form, 50 at a time (a class arriving), each POST timed.
    t = time.monotonic()
    seats: list[tuple[str, str]] = []
    join_times: list[float] = []
    for i in range(0, n, 50):
        names = [f"p{k:03d}" for k in range(i, min(n, i + 50))]
        done = await asyncio.gather(
            *(asyncio.to_thread(join, args.url, room.code, name) for name in names)
        )
        seats += [(name, token) for name, (token, _) in zip(names, done, strict=True)]
        join_times += [took for _, took in done]
    results.append(row("join form POST (each participant)", join_times, n))
    slowest["join"] = max(join_times)
    print(results[-1], f"({time.monotonic() - t:.1f} s for all)", flush=True)

    clients = [Participant(name) for name, _ in seats]
    cookie_name = rooms.seat_cookie_name(room.code)

    async def connect(client: Participant, token: str) -> None:
        client.ws = await open_socket(
            args.url, f"/ws/workshop/{room.code}/", f"{cookie_name}={token}"
        )
        readers.append(asyncio.create_task(client.read()))

    # Sockets in waves of 50, so the listen backlog is not the thing being measured.
    t = time.monotonic()
    for i in range(0, n, 50):
        await asyncio.gather(
            *(
                connect(c, tok)
                for c, (_, tok) in zip(clients[i : i + 50], seats[i : i + 50], strict=True)
            )
        )
    all_in = time.time()
    print(f"{n} sockets connected in {time.monotonic() - t:.1f} s", flush=True)
    await wait_marks([presenter, screen], "presence", args.timeout)
    counted = [w.marks["presence"] - all_in for w in (presenter, screen) if "presence" in w.marks]
    results.append(row(f"presence: console and projector show {n} connected", counted, 2))
    slowest["presence"] = max(counted, default=float("inf"))
    print(results[-1], flush=True)
    await asyncio.sleep(2)  # let every first frame (the room's state) arrive

    cpu_rows: list[str] = []

    async def phase(name: str, action, marker: str, *, per_client_start: bool = False):
        s0, b0 = sampler.cpu()
        w0 = time.time()
        t0 = time.time()
        await action()
        await wait_marks(clients, marker, args.timeout)
        t1 = time.time()
        s1, b1 = sampler.cpu()
        if per_client_start:
            lat = [c.marks[marker] - c.sent[marker] for c in clients if marker in c.marks]
        else:
            lat = [c.marks[marker] - t0 for c in clients if marker in c.marks]
        results.append(row(name, lat, len(clients)))
        slowest[name] = max(lat) if len(lat) == len(clients) else float("inf")
        wall = max(t1 - w0, 1e-6)
        cpu_rows.append(
            f"| {name} | {t1 - w0:.2f} | {100 * (s1 - s0) / wall:.0f}% | {100 * (b1 - b0) / wall:.0f}% |"
        )
        print(results[-1], flush=True)

    async def presenter_send(**frame) -> None:
        await presenter.ws.send(json.dumps(frame))

    def plan_next() -> object:
        return presenter_send(action="plan_next")  # the console's Next (a clicker's PageDown)

    await phase("follow: tier change on every screen (plan step 1)", plan_next, "follow")
    await phase("claim opened (plan step 2)", plan_next, "claim")
    round_id = await sync_to_async(
        lambda: ClaimRound.objects.filter(room=room).latest("opened_at").pk
    )()

    async def start_timer() -> None:
        fields = {"seconds": args.vote_seconds}
        await asyncio.to_thread(presenter_post, args.url, room.code, session, "timer", fields)

    timer_t0 = time.time()
    await phase("vote timer on every screen", start_timer, "timer")
    deadline = timer_t0 + args.vote_seconds

    rng = random.Random(12)
    waits = [rng.uniform(0, args.spread) for _ in clients]  # when each one clicks

    async def all_vote() -> None:
        async def one(i: int, c: Participant) -> None:
            await asyncio.sleep(waits[i])
            c.sent["vote-ack"] = time.time()
            await c.ws.send(
                json.dumps(
                    {
                        "action": "vote",
                        "round": str(round_id),
                        "choice": "holds" if i % 3 else "costs",
                    }
                )
            )

        await asyncio.gather(*(one(i, c) for i, c in enumerate(clients)))

    how = f"spread over {args.spread:g} s" if args.spread else "all in the same instant"
    presenter.watches["answered"] = f'>{n}</strong> of <span class="present-of">{n}</span> present'
    votes_t0 = time.time()
    await phase(
        f"vote acknowledged to each voter (own send to own ack; {how})",
        all_vote,
        "vote-ack",
        per_client_start=True,
    )
    await wait_marks([presenter], "answered", args.timeout)
    counted = presenter.marks.get("answered")
    if time.time() > deadline:
        print("!! the votes took longer than the timer: raise --vote-seconds", flush=True)
    # Time runs out: a few more votes arrive late and each is refused, nothing counted.
    await asyncio.sleep(max(0.0, deadline - time.time()) + 1)
    late = clients[:10]
    for c in late:
        c.sent["late-refused"] = time.time()
        await c.ws.send(json.dumps({"action": "vote", "round": str(round_id), "choice": "costs"}))
    await wait_marks(late, "late-refused", args.timeout)
    refused = [
        c.marks["late-refused"] - c.sent["late-refused"] for c in late if "late-refused" in c.marks
    ]
    results.append(
        row("late vote refused once time is up (own send to own refusal)", refused, len(late))
    )
    slowest["late votes"] = max(refused) if len(refused) == len(late) else float("inf")
    print(results[-1], flush=True)
    await phase(
        "reveal: split, answer, explanation", lambda: presenter_send(action="reveal"), "reveal"
    )

    await phase("shared run opened for predictions (plan step 3)", plan_next, "run-open")
    shared_id = await sync_to_async(lambda: Room.objects.get(pk=room.pk).shared_run_id)()

    async def all_predict() -> None:
        async def one(i: int, c: Participant) -> None:
            await asyncio.sleep(waits[i])
            c.sent["predict-ack"] = time.time()
            await c.ws.send(
                json.dumps(
                    {"action": "predict", "run": str(shared_id), "value": str(args.tasks + i % 50)}
                )
            )

        await asyncio.gather(*(one(i, c) for i, c in enumerate(clients)))

    await phase(
        f"prediction acknowledged (own send to own ack; {how})",
        all_predict,
        "predict-ack",
        per_client_start=True,
    )
    s0, b0 = sampler.cpu()
    run_t0 = time.time()
    await phase(
        "run fired: live section on every screen", lambda: presenter_send(action="fire"), "fire"
    )
    await wait_marks(clients, "outcome", args.timeout + args.countdown + 60)
    run_t1 = time.time()
    s1, b1 = sampler.cpu()

    # Receipts: from the worker's signal (event.at) to the moment each client held the row.
    from teachlab.lab.models import Kind, RunEvent
    from teachlab.workshop.models import SharedRun

    run_id = await sync_to_async(lambda: SharedRun.objects.get(pk=shared_id).run_id)()
    ats = dict(
        await sync_to_async(
            lambda: list(
                RunEvent.objects.filter(run_id=run_id, kind=Kind.RECEIVED).values_list("seq", "at")
            )
        )()
    )
    every: list[float] = []
    per_event_max: list[float] = []
    missing = 0
    for seq, at in ats.items():
        got = [c.seqs[seq] - at for c in clients if seq in c.seqs]
        missing += len(clients) - len(got)
        every.extend(got)
        if len(got) == len(clients):
            per_event_max.append(max(got))
    outcome = [c.marks["outcome"] for c in clients if "outcome" in c.marks]
    await phase("leaderboard on every screen (plan step 4)", plan_next, "board")
    await phase("podium: past the plan's last step", plan_next, "podium")

    for r in readers:
        r.cancel()
    for c in [*clients, presenter, screen]:
        await c.ws.close()
    sampler.stop_flag.set()

    print("\n| broadcast | clients holding it | p50 ms | p95 ms | max ms |\n|---|---|---|---|---|")
    for line in results:
        print(line)
    print(
        row(
            f"receipt row, worker signal to client ({len(ats)} receipts, every client x receipt)",
            every,
            len(every) + missing,
        )
    )
    print(
        row(
            "receipt row held by every client (per receipt, slowest client)",
            per_event_max,
            len(ats),
        )
    )
    if outcome:
        spread = [x - min(outcome) for x in outcome]
        print(row("outcome (first client to each client)", spread, len(clients)))
        slowest["outcome spread"] = max(spread) if len(outcome) == len(clients) else float("inf")
    if per_event_max:
        slowest["receipt rows"] = max(per_event_max) if not missing else float("inf")
    if counted:
        print(
            f"\nall {len(clients)} votes counted on the presenter screen {1000 * (counted - votes_t0):.0f} ms after the first was sent"
        )
    print("\n| phase | wall s | server CPU | bench clients CPU |\n|---|---|---|---|")
    for line in cpu_rows:
        print(line)
    wall = max(run_t1 - run_t0, 1e-6)
    print(
        f"| whole run, fire to outcome | {wall:.1f} | {100 * (s1 - s0) / wall:.0f}% | {100 * (b1 - b0) / wall:.0f}% |"
    )
    print(
        f"\nserver peak RSS {sampler.rss_peak / 2**20:.0f} MiB; frames per client {statistics.mean(c.frames for c in clients):.0f}, "
        f"bytes per client {statistics.mean(c.bytes for c in clients) / 1024:.0f} KiB; "
        f"machine load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after "
        f"({os.cpu_count()} CPUs)"
    )
    worst = max(slowest, key=slowest.get)
    verdict = "yes" if slowest[worst] <= 1.0 else "NO"
    print(
        f"every client within 1 s in every phase: {verdict} (slowest: {worst}, "
        f"{1000 * slowest[worst]:.0f} ms); database {connection.vendor}"
    )
    figures = {
        "within_1s": slowest[worst] <= 1.0,
        "slowest_phase": worst,
        "slowest_ms": _ms(slowest[worst]),
        "server_rss_peak_mib": round(sampler.rss_peak / 2**20),
        "detail": {
            "database": connection.vendor,
            "slowest_ms_by_phase": {phase: _ms(s) for phase, s in slowest.items()},
        },
    }
    print(f"result: {measurement.save(figures, out=args.out)}")


def _ms(seconds: float) -> float | None:
    """Seconds as whole ms; None for a phase some client never got (inf)."""
    return round(seconds * 1000) if seconds != float("inf") else None


if __name__ == "__main__":
    asyncio.run(main())

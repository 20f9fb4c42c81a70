"""Every fuzz target, one line each: URL pattern -> how to make its path and fields; socket
frame type -> the frame's shape. test_targets_complete.py fails when the app has a URL pattern
or frame type that is in neither table nor in EXEMPT, and lists it; adding a target is adding a
line here (the world in world.py holds the ids the good values come from).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import strategies as st

from tests.fuzz.strategies import fields, json_values, junk, query, segment
from tests.fuzz.world import World

CLIENTS = ("learner", "anon", "instructor", "participant")
WS_ERROR = re.compile(r'id="ws-error"[^>]*>([^<]*)</p>')


def path(template: str, *parts: Callable[[World], st.SearchStrategy]):
    """A path strategy from a template and one segment strategy per {} in it."""

    def make(w: World):
        return st.tuples(*(p(w) for p in parts)).map(lambda got: template.format(*got))

    return make


def ids(*names: str):
    """A segment: one of the world's ids (or good values), or junk."""

    def make(w: World):
        good = []
        for name in names:
            value = w.ids.get(name, w.good.get(name))
            good += [str(v) for v in value] if isinstance(value, list) else [str(value)]
        return segment(*good)

    return make


def form(names: list[str], **good: Callable[[World], list] | list):
    def make(w: World):
        return fields(names, {k: v(w) if callable(v) else v for k, v in good.items()})

    return make


def qs(names: list[str], **good):
    def make(w: World):
        return query(names, {k: v(w) if callable(v) else v for k, v in good.items()})

    return make


def good(name: str) -> Callable[[World], list]:
    return lambda w: [str(v) for v in w.good[name]] if isinstance(w.good[name], list) else []


def world_id(name: str) -> Callable[[World], list]:
    return lambda w: [str(w.ids[name])]


# --- what counts as "the app took it" -------------------------------------------------------


def took(response) -> bool:
    """The default: a 2xx/3xx that is not a redirect to the sign-in page."""
    if response.status_code >= 400:
        return False
    return "/accounts/login/" not in response.get("Location", "")


def took_unless_ws_error(response) -> bool:
    """Workshop presenter actions answer an htmx refusal with 200 and the error in #ws-error."""
    match = WS_ERROR.search(response.content.decode(errors="replace"))
    return took(response) and not (match and match.group(1).strip())


def never(response) -> bool:
    """Inputs this target's world can only refuse (no such worker, a lane that is not there)."""
    return False


def signed_in(response) -> bool:
    return response.status_code == 302


@dataclass(frozen=True)
class Http:
    path: Callable[[World], st.SearchStrategy[str]]
    methods: tuple[str, ...] = ("POST",)
    fields: Callable[[World], st.SearchStrategy[dict]] = lambda w: st.just({})
    clients: tuple[str, ...] = ("learner",)
    took: Callable = took
    after: Callable[[World], None] | None = None  # after an input the app took
    prepare: Callable[[World], None] | None = None  # once, before the first input
    settings: dict = field(default_factory=dict)


def signout(w: World) -> None:
    w.clients["anon"].logout()


def const(text: str):
    return lambda w: st.just(text)


def _mangled(good: bytes) -> st.SearchStrategy[bytes]:
    """The learner's own progress file with one top-level value swapped for any JSON."""
    data = json.loads(good)

    def swap(pair):
        key, value = pair
        return json.dumps({**data, key: value}).encode()

    keys = st.sampled_from(sorted(data)) | st.text(max_size=12)
    return st.tuples(keys, json_values).map(swap)


def _upload_name(name: str) -> str:
    """The name as a browser sends it: its last path part. Django's test client cannot build an
    upload named "", "." or "a/" at all, and its parser drops such a part before the view runs."""
    base = os.path.basename(name)
    return "f" if base in {"", ".", ".."} else base


def progress_upload(w: World):
    """A progress import's form: a file field holding the learner's own download, a mangled
    copy, any JSON, junk text or bytes, under any name; now and then no file at all."""
    good = w.good["progress_file"][0]
    content = st.one_of(
        st.just(good),
        _mangled(good),
        _mangled(good),
        json_values.map(lambda v: json.dumps(v).encode()),
        junk.map(str.encode),
        st.binary(max_size=200),
        st.just(good[: len(good) // 2]),
    )
    name = st.sampled_from(["progress.json", "progress.txt", ""]) | st.text(max_size=20)
    upload = st.builds(lambda n, c: SimpleUploadedFile(_upload_name(n), c), name, content)
    field_name = st.just("file") | st.just("file") | st.text(min_size=1, max_size=8)
    files = st.dictionaries(field_name, upload, max_size=2)
    return st.builds(lambda f, extra: {**extra, **f}, files, fields(["confirm"]))


def plan_upload(w: World):
    """A plan import's form: the instructor's own exported plan, a mangled copy, any JSON, junk
    text or bytes; now and then no file at all."""
    good = w.good["plan_file"][0]
    content = st.one_of(
        st.just(good),
        _mangled(good),
        _mangled(good),
        json_values.map(lambda v: json.dumps(v).encode()),
        junk.map(str.encode),
        st.binary(max_size=200),
    )
    name = st.sampled_from(["plan.json", "plan.txt"]) | st.text(max_size=20)
    upload = st.builds(lambda n, c: SimpleUploadedFile(_upload_name(n), c), name, content)
    field_name = st.just("file") | st.just("file") | st.text(min_size=1, max_size=8)
    return st.dictionaries(field_name, upload, max_size=2)


LAB_FIELDS = ["lane", "countdown", "eta", "expires", "duration", "count", "spacing"]
LAB_FIELDS += ["acks_late", "guard", "prediction", "fail", "retry", "retry_delay"]
RUN_OPEN = ["experiment", "lane", "metric", "prompt", "count", "countdown", "spacing"]
RUN_OPEN += ["duration", "acks_late", "guard"]
STEP_FIELDS = ["kind", "question", "tier", "claim", "seconds", "lane", "metric", "prompt"]
STEP_FIELDS += ["count", "countdown", "spacing", "duration", "acks_late", "guard"]
PLAN = "/workshop/plans/{}/"
PLAN_CLIENTS = ("instructor", "instructor", "learner", "anon", "participant")
DRIVERS = ("instructor", "instructor", "participant", "learner", "anon")
ROOM = "/workshop/r/{}/"
AUTH = ["username", "password", "next"]
AUTH_GOOD = {"username": ["fuzz-learner", "fuzz-instructor"], "password": ["fuzz-pass-123!"]}
NUMBERS = [str(n) for n in range(0, 12)]

HTTP: dict[str, Http] = {
    # lessons: quiz, review, progress, self-rating, sign-up
    "lessons:quiz_start": Http(
        const("/quiz/start/"), fields=form(["question"], question=good("questions"))
    ),
    "lessons:quiz_answer": Http(
        path("/quiz/a/{}/answer/", ids("quiz", "quiz_mixed", "quiz_other")),
        fields=form(["claim", "answer"], claim=good("claims"), answer=["holds", "costs"]),
    ),
    "lessons:quiz_retry": Http(path("/quiz/a/{}/retry/", ids("quiz", "quiz_other"))),
    "lessons:review_quiz": Http(const("/review/quiz/")),
    "lessons:progress_reset": Http(
        const("/progress/reset/"), ("POST", "GET"), form(["confirm"], confirm=["yes", "no"])
    ),
    "lessons:progress_import": Http(
        const("/progress/import/"), fields=progress_upload, clients=("learner", "anon")
    ),
    "lessons:progress_download": Http(
        const("/progress/download/"), ("GET",), clients=("learner", "anon")
    ),
    "lessons:rate": Http(
        path("/q/{}/{}/rate/", ids("questions"), ids("tiers")),
        fields=form(["rating"], rating=["missed", "partly", "nailed"]),
    ),
    "lessons:theme": Http(
        const("/settings/theme/"),
        fields=form(["theme", "next"], theme=["system", "light", "dark"], next=["/", "/lab/"]),
        clients=("learner", "anon"),
    ),
    "lessons:signup": Http(
        const("/accounts/signup/"),
        ("POST", "GET"),
        form(
            ["username", "password1", "password2"],
            username=["fuzz-learner", "newbie"],
            password1=["fuzz-pass-123!"],
            password2=["fuzz-pass-123!"],
        ),
        clients=("anon",),
    ),
    # lab: run form, worker controls, exports
    "lab:home": Http(const("/lab/"), ("POST", "GET"), form(LAB_FIELDS)),
    "lab:worker_action": Http(
        path("/lab/workers/{}/{}/", ids(), ids("worker_actions")),
        clients=("learner", "instructor"),
        took=never,
        settings={"LAB_RUNS_PER_MINUTE": 10**6},
    ),
    "lab:export_csv": Http(path("/lab/runs/{}/export.csv", ids("run", "run_other")), ("GET",)),
    "lab:export_json": Http(path("/lab/runs/{}/export.json", ids("run", "run_other")), ("GET",)),
    # lab: experiments
    "lab:experiments:detail": Http(
        path("/lab/experiments/{}/", ids("experiments")),
        ("POST", "GET"),
        form(["prediction"], prediction=good("predictions")),
        clients=("learner", "instructor"),
    ),
    "lab:experiments:attempt": Http(
        path(
            "/lab/experiments/{}/attempts/{}/?{}",
            ids("experiments"),
            ids("attempt", "attempt_other"),
            qs(["watch"], watch=["main"]),
        ),
        ("GET",),
    ),
    "lab:experiments:status": Http(
        path(
            "/lab/experiments/{}/attempts/{}/status/?{}",
            ids("experiments"),
            ids("attempt", "attempt_other"),
            qs(["known", "watch"], known=NUMBERS, watch=["main"]),
        ),
        ("GET",),
    ),
    "lab:experiments:run_charts": Http(
        path("/lab/experiments/runs/{}/", ids("run", "run_other")), ("GET",)
    ),
    # workshop: join, create, every presenter action, results
    "workshop:create": Http(
        const("/workshop/rooms/new/"),
        fields=form(["title"]),
        clients=("instructor", "learner", "anon"),
    ),
    "workshop:join": Http(
        const("/workshop/join/"),
        ("POST", "GET"),
        form(["code", "nickname"], code=lambda w: [w.ids["room"], w.ids["room"].lower(), "ZZZZZZ"]),
        clients=("anon", "learner", "participant"),
    ),
    "workshop:drive": Http(
        path(ROOM + "drive/", ids("room")),
        fields=form(["question", "tier"], question=good("questions"), tier=good("tiers")),
        clients=DRIVERS,
        took=took_unless_ws_error,
    ),
    "workshop:claim": Http(
        path(ROOM + "claim/", ids("room")),
        fields=form(["claim"], claim=good("claims")),
        clients=DRIVERS,
        took=took_unless_ws_error,
    ),
    "workshop:reveal": Http(
        path(ROOM + "reveal/", ids("room")), clients=DRIVERS, took=took_unless_ws_error
    ),
    "workshop:run": Http(
        path(ROOM + "run/", ids("room")),
        fields=form(
            RUN_OPEN,
            metric=["receipts"],
            lane=["redis-short"],
            count=NUMBERS,
            experiment=good("room_experiments"),
        ),
        clients=DRIVERS,
        took=took_unless_ws_error,
    ),
    "workshop:fire": Http(path(ROOM + "fire/", ids("room")), clients=DRIVERS, took=never),
    "workshop:outcome": Http(path(ROOM + "outcome/", ids("room")), clients=DRIVERS, took=never),
    "workshop:timer": Http(
        path(ROOM + "timer/", ids("room")),
        fields=form(["seconds"], seconds=["5", "30", "600", "4", "601"]),
        clients=DRIVERS,
        took=took_unless_ws_error,
    ),
    "workshop:spread": Http(
        path(ROOM + "spread/", ids("room")),
        fields=form(["show"], show=["1", "0"]),
        clients=DRIVERS,
        took=took_unless_ws_error,
    ),
    "workshop:answers_open": Http(
        path(ROOM + "answers/open/", ids("room")),
        fields=form(["seconds"], seconds=["", "5", "60", "600", "4"]),
        clients=DRIVERS,
        took=took_unless_ws_error,
    ),
    "workshop:answers_end": Http(
        path(ROOM + "answers/end/", ids("room")), clients=DRIVERS, took=took_unless_ws_error
    ),
    "workshop:answer_show": Http(
        path(ROOM + "answers/show/", ids("room")),
        fields=form(["answer", "show"], answer=world_id("answer"), show=["1", "0"]),
        clients=DRIVERS,
        took=took_unless_ws_error,
        prepare=World.answers_end,
    ),
    # workshop moderation: lock joins, the leaderboard, seats (the panel answers like the
    # presenter's actions: 200 with the refusal in #ws-error under htmx, else a 400)
    "workshop:lock": Http(
        path(ROOM + "lock/", ids("room")),
        fields=form(["state", "q"], state=["on", "off"]),
        clients=DRIVERS,
        took=took_unless_ws_error,
    ),
    "workshop:leaderboard": Http(
        path(ROOM + "leaderboard/", ids("room")),
        fields=form(["state", "q"], state=["on", "off"]),
        clients=DRIVERS,
        took=took_unless_ws_error,
    ),
    "workshop:kick": Http(
        path(ROOM + "seats/{}/kick/", ids("room"), ids("seat", "seat_other")),
        fields=form(["q"]),
        clients=DRIVERS,
        took=took_unless_ws_error,
    ),
    "workshop:readmit": Http(
        path(ROOM + "seats/{}/readmit/", ids("room"), ids("seat", "seat_other")),
        fields=form(["q"]),
        clients=DRIVERS,
        took=took_unless_ws_error,
    ),
    "workshop:rename": Http(
        path(ROOM + "seats/{}/rename/", ids("room"), ids("seat", "seat_other")),
        fields=form(["nickname", "q"], nickname=good("nicknames")),
        clients=DRIVERS,
        took=took_unless_ws_error,
    ),
    "workshop:close": Http(
        path(ROOM + "close/", ids("room")),
        clients=DRIVERS,
        took=took_unless_ws_error,
        after=World.reopen_room,
    ),
    "workshop:browse": Http(
        path(
            ROOM + "browse/?{}",
            ids("room"),
            qs(["q", "tier", "back"], q=good("questions"), tier=good("tiers")),
        ),
        ("GET",),
        clients=DRIVERS,
    ),
    "workshop:results_csv": Http(
        path(ROOM + "results/{}.csv", ids("room"), ids("exports")), ("GET",), clients=DRIVERS
    ),
    # workshop session plans (planviews.py): owner only, a bad step gets its message
    "workshop:plan_new": Http(
        const("/workshop/plans/new/"), fields=form(["title"]), clients=PLAN_CLIENTS
    ),
    "workshop:plan_import": Http(
        const("/workshop/plans/import/"), fields=plan_upload, clients=PLAN_CLIENTS
    ),
    "workshop:plan_title": Http(
        path(PLAN + "title/", ids("plan", "plan_other")),
        fields=form(["title"]),
        clients=PLAN_CLIENTS,
    ),
    "workshop:plan_step_add": Http(
        path(PLAN + "steps/", ids("plan", "plan_other")),
        fields=form(
            STEP_FIELDS,
            kind=["tier", "claim", "answers", "run", "leaderboard"],
            question=good("questions"),
            tier=good("tiers"),
            claim=good("claims"),
            lane=["redis-short"],
            metric=["receipts"],
            count=NUMBERS,
        ),
        clients=PLAN_CLIENTS,
    ),
    "workshop:plan_step_remove": Http(
        path(PLAN + "steps/{}/remove/", ids("plan", "plan_other"), ids("plan_steps")),
        clients=PLAN_CLIENTS,
    ),
    "workshop:plan_step_move": Http(
        path(PLAN + "steps/{}/move/", ids("plan", "plan_other"), ids("plan_steps")),
        fields=form(["to"], to=["up", "down"]),
        clients=PLAN_CLIENTS,
    ),
    "workshop:plan_delete": Http(path(PLAN + "delete/", ids("plan_other")), clients=PLAN_CLIENTS),
    "workshop:plan_room": Http(
        path(PLAN + "room/", ids("plan", "plan_other")), clients=PLAN_CLIENTS
    ),
    "workshop:plan_next": Http(
        path(ROOM + "plan/next/", ids("room")), clients=DRIVERS, took=took_unless_ws_error
    ),
    "workshop:plan_previous": Http(
        path(ROOM + "plan/previous/", ids("room")), clients=DRIVERS, took=took_unless_ws_error
    ),
    # the console's B key: blank the projector (issue 28)
    "workshop:blank": Http(
        path(ROOM + "blank/", ids("room")),
        fields=form(["state"], state=["on", "off"]),
        clients=DRIVERS,
        took=took_unless_ws_error,
    ),
    # sign-in, sign-out, health
    "login": Http(
        const("/accounts/login/"),
        ("POST", "GET"),
        form(AUTH, **AUTH_GOOD),
        clients=("anon",),
        took=signed_in,
        after=signout,
    ),
    "admin/login/": Http(
        const("/admin/login/"),
        ("POST", "GET"),
        form(AUTH, **AUTH_GOOD),
        clients=("anon",),
        took=signed_in,
        after=signout,
    ),
    "logout": Http(const("/accounts/logout/"), ("POST",), clients=("anon",)),
    "/healthz": Http(path("/healthz?{}", qs(["x"])), ("GET", "HEAD")),
    "/readyz": Http(path("/readyz?{}", qs(["x"])), ("GET", "HEAD")),
}

# Pages that take no form: only their path segments and query strings are input. One target
# spreads its inputs over all of them (every GET must change nothing); names the same way.
PAGES: dict[str, Callable[[World], st.SearchStrategy[str]]] = {
    "favicon": const("/favicon.ico"),
    "lessons:index": const("/"),
    "lessons:question": path("/q/{}/", ids("questions")),
    "lessons:tier": path("/q/{}/{}/", ids("questions"), ids("tiers")),
    "lessons:quiz_index": const("/quiz/"),
    "lessons:quiz_attempt": path("/quiz/a/{}/", ids("quiz", "quiz_other")),
    "lessons:quiz_result": path("/quiz/a/{}/result/", ids("quiz", "quiz_other")),
    "lessons:review": const("/review/"),
    "lessons:progress": const("/progress/"),
    "lessons:glossary": const("/glossary/"),
    "lessons:search": path(
        "/search/?{}", qs(["q"], q=["prefetch", "visibility timeout", '"NEAR(acks* ', "x" * 300])
    ),
    "lessons:evidence_note": path("/evidence/notes/{}/", lambda w: segment("1", "4", "14")),
    "lessons:evidence_case": path(
        "/evidence/cases/{}/", lambda w: segment("payout-timeouts-at-12-hours")
    ),
    "lessons:evidence_source": path(
        "/evidence/source/{}/{}/",
        lambda w: segment("kombu.transport.redis", "celery.app.task", "os", "django.conf"),
        lambda w: segment("QoS.restore_visible", "Task.retry", "path", "settings"),
    ),
    "lab:workers": const("/lab/workers/"),
    "lab:estimate": path(
        "/lab/estimate/?{}", qs(LAB_FIELDS, lane=["redis-short", "rabbit-quorum"])
    ),
    "lab:history": const("/lab/runs/"),
    "lab:run": path("/lab/runs/{}/", ids("run", "run_other")),
    "lab:experiments:list": const("/lab/experiments/"),
    "workshop:index": path("/workshop/?{}", qs(["code"])),
    "workshop:room": path(ROOM, ids("room")),
    "workshop:present": path(ROOM + "present/", ids("room")),
    "workshop:screen": path(ROOM + "screen/", ids("room")),
    "workshop:seats": path(ROOM + "seats/?{}", ids("room"), qs(["q"], q=good("nicknames"))),
    "workshop:ranking": path(
        ROOM + "ranking/?{}",
        ids("room"),
        qs(["run", "page"], run=lambda w: [str(w.ids["shared_done"])], page=NUMBERS),
    ),
    "workshop:results": path(ROOM + "results/", ids("room")),
    "workshop:plans": const("/workshop/plans/"),
    "workshop:plan": path(PLAN, ids("plan", "plan_other")),
    "workshop:plan_export": path(PLAN + "export.json", ids("plan", "plan_other")),
}

# GETs that record something by design: a tier's page records that the learner revealed it
# (lessons/progress.py, TierReveal), which the index and progress pages show.
PAGES_THAT_RECORD = {"lessons:tier"}

# Patterns with no target, and why.
EXEMPT = {
    "admin/*": "unnamed routes of Django's admin, as admin:*",
    "admin:*": "Django's own admin (staff only, Django's forms); its sign-in, the one form "
    "anyone reaches, is the admin/login/ target",
}


# --- socket frames --------------------------------------------------------------------------


def frame(action: str, names: dict[str, Callable[[World], list]]):
    """Frames of one action: each field absent, good, junk or any JSON value; htmx's extras."""

    def make(w: World):
        def value(good_values):
            choices = [junk, json_values, st.integers(-5, 10**13)]
            if good_values:
                choices = [st.sampled_from(good_values)] * 3 + choices
            return st.one_of(*choices)

        named = {name: value(get(w) if get else []) for name, get in names.items()}
        extras = {
            "HEADERS": st.dictionaries(st.text(max_size=20), junk, max_size=3) | json_values,
            "csrfmiddlewaretoken": junk,
            "extra": junk,
        }
        act = st.just(action) | st.just(action) | st.just(action) | junk
        complete = st.fixed_dictionaries({"action": act, **named}, optional=extras)
        partial = st.fixed_dictionaries({"action": act}, optional={**named, **extras})
        return complete | partial

    return make


@dataclass(frozen=True)
class Frames:
    shape: Callable[[World], st.SearchStrategy[dict]]
    sockets: tuple[str, ...]  # which sockets get them, drawn per frame


PARTICIPANT_FIRST = ("participant", "participant", "presenter")
PRESENTER_FIRST = ("presenter", "presenter", "presenter", "participant")


def seats(w: World) -> list[str]:
    """The participant's seat and the other one (a kick of the first closes its socket)."""
    return [str(w.ids["seat"]), str(w.ids["seat_other"])]


FRAMES: dict[str, Frames] = {
    "lab:resync": Frames(
        frame("resync", {"after": lambda w: ["0-0"], "seq": lambda w: ["1"]}), ("lab",)
    ),
    "workshop:vote": Frames(
        frame("vote", {"round": world_id("round"), "choice": lambda w: ["holds", "costs"]}),
        PARTICIPANT_FIRST,
    ),
    "workshop:predict": Frames(
        frame("predict", {"run": world_id("shared"), "value": lambda w: NUMBERS}), PARTICIPANT_FIRST
    ),
    "workshop:drive": Frames(
        frame("drive", {"question": good("questions"), "tier": good("tiers")}), PRESENTER_FIRST
    ),
    "workshop:claim": Frames(frame("claim", {"claim": good("claims")}), PRESENTER_FIRST),
    "workshop:reveal": Frames(frame("reveal", {}), PRESENTER_FIRST),
    "workshop:fire": Frames(frame("fire", {}), PRESENTER_FIRST),
    "workshop:close": Frames(frame("close", {}), PRESENTER_FIRST),
    "workshop:plan_next": Frames(frame("plan_next", {}), PRESENTER_FIRST),
    "workshop:plan_previous": Frames(frame("plan_previous", {}), PRESENTER_FIRST),
    "workshop:answer": Frames(
        frame("answer", {"round": world_id("answer_round"), "text": lambda w: ["mine", "x"]}),
        PARTICIPANT_FIRST,
    ),
    "workshop:lock": Frames(frame("lock", {"state": lambda w: ["on", "off"]}), PRESENTER_FIRST),
    # the console's keys over the socket (issue 28): T, L, B; the run's outcome; an answer
    # round's end
    "workshop:timer": Frames(
        frame("timer", {"seconds": lambda w: ["5", "30", "600"]}), PRESENTER_FIRST
    ),
    "workshop:leaderboard": Frames(
        frame("leaderboard", {"state": lambda w: ["on", "off"]}), PRESENTER_FIRST
    ),
    "workshop:blank": Frames(frame("blank", {"state": lambda w: ["on", "off"]}), PRESENTER_FIRST),
    "workshop:outcome": Frames(frame("outcome", {}), PRESENTER_FIRST),
    "workshop:answers_end": Frames(frame("answers_end", {}), PRESENTER_FIRST),
    "workshop:kick": Frames(frame("kick", {"seat": seats}), PRESENTER_FIRST),
    "workshop:readmit": Frames(frame("readmit", {"seat": seats}), PRESENTER_FIRST),
    "workshop:rename": Frames(
        frame("rename", {"seat": seats, "nickname": good("nicknames")}), PRESENTER_FIRST
    ),
}

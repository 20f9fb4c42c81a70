"""Cross-app security rules, checked over every route rather than per feature: CSRF on every
POST, origin-checked WebSockets, one learner's lab things invisible to another, worker controls
for staff only, sanitised lesson Markdown. Fast: no workers, only the session's private Redis."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client
from django.urls import URLResolver, get_resolver, resolve, reverse
from django.urls.exceptions import Resolver404
from django.urls.resolvers import RoutePattern

from lessons.learners import SESSION_KEY
from lessons.models import Learner
from teachlab.asgi import application
from teachlab.lab.experiments.models import Attempt
from teachlab.lab.models import Run
from teachlab.routing import websocket_urlpatterns
from teachlab.workshop import rooms
from tests.workshop.conftest import asynctest, make_user, seat_cookie, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)

db = database_sync_to_async
CSRF_REFUSED = b"CSRF verification failed"
GOOD_ORIGIN = (b"origin", b"http://127.0.0.1")
FOREIGN_ORIGINS = [b"http://evil.example", b"http://127.0.0.1.evil.example", b"null"]
LESSON_FIXTURES = Path(__file__).parent / "lessons" / "fixtures"

# POST endpoints named in the security brief; the sweep must reach each of them.
STATE_CHANGING = {
    "lessons:quiz_start",
    "lessons:quiz_answer",
    "lessons:quiz_retry",
    "lessons:review_quiz",
    "lessons:progress_reset",
    "lessons:progress_import",
    "lessons:rate",
    "lessons:signup",
    "lab:home",
    "lab:worker_action",
    "lab:experiments:detail",
    "workshop:create",
    "workshop:join",
    "workshop:drive",
    "workshop:claim",
    "workshop:reveal",
    "workshop:run",
    "workshop:fire",
    "workshop:outcome",
    "workshop:close",
    "workshop:lock",
    "workshop:leaderboard",
    "workshop:kick",
    "workshop:readmit",
    "workshop:rename",
    "workshop:plan_next",
    "workshop:plan_previous",
    "workshop:plan_new",
    "workshop:plan_import",
    "workshop:plan_title",
    "workshop:plan_step_add",
    "workshop:plan_step_remove",
    "workshop:plan_step_move",
    "workshop:plan_delete",
    "workshop:plan_room",
    "logout",
}


# --- helpers ---------------------------------------------------------------------------------


def _sample(pattern) -> str:
    """A concrete path piece for a URL pattern: each parameter becomes a harmless sample."""
    if isinstance(pattern, RoutePattern):
        return re.sub(
            r"<(?:(\w+):)?\w+>",
            lambda m: "1" if m.group(1) == "int" else "x1",
            str(pattern),
        )
    text = pattern.regex.pattern.lstrip("^").rstrip("$").replace("\\Z", "")
    return re.sub(r"\(\?P<\w+>[^()]*\)", "x1", text)


def _routes(resolver=None, prefix: str = "", namespace: str = ""):
    """(path, "namespace:name") for every HTTP route in the project."""
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        piece = prefix + _sample(entry.pattern)
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _routes(entry, piece, inner)
        else:
            yield "/" + piece, f"{namespace}{entry.name or ''}"


def _csrf_client(user=None) -> Client:
    """A browser that holds a valid CSRF cookie (as any visitor does) and enforces checks."""
    client = Client(enforce_csrf_checks=True)
    if user is not None:
        client.force_login(user)
    client.get(reverse("workshop:index"))
    assert "csrftoken" in client.cookies, "pages should set the CSRF cookie (hx-headers uses it)"
    return client


def _learner_session() -> tuple[Learner, str]:
    learner = Learner.objects.create()
    session = SessionStore()
    session[SESSION_KEY] = learner.key
    session.create()
    return learner, session.session_key


def _learner_client(session_key: str) -> Client:
    client = Client()
    client.cookies["sessionid"] = session_key
    return client


def _finished_run(learner: Learner) -> Run:
    return Run.objects.create(
        learner=learner,
        lane="redis-short",
        params={"count": 1, "countdown": 25},
        task_ids=["task-a"],
        visibility_timeout=10,
        fired_at=1000.0,
        status=Run.Status.DONE,
    )


def _ws(path: str, *, origin: bytes, cookie: str = "") -> WebsocketCommunicator:
    headers = [(b"origin", origin), (b"host", b"127.0.0.1")]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    return WebsocketCommunicator(application, path, headers=headers)


async def _opens(path: str, *, origin: bytes, cookie: str = "") -> bool:
    comm = _ws(path, origin=origin, cookie=cookie)
    connected, _ = await comm.connect(timeout=5)
    if connected:
        await comm.disconnect()
    return connected


# --- (a) CSRF on every POST --------------------------------------------------------------------


def test_every_post_without_a_csrf_token_is_refused_for_visitors_and_staff():
    staff = make_user("csrf-staff", staff=True)
    routes = list(_routes())
    reached = set()
    for client in (_csrf_client(), _csrf_client(staff)):
        for path, name in routes:
            try:
                resolve(path)
            except Resolver404:
                continue
            reached.add(name)
            response = client.post(path, {"x": "1"})
            assert response.status_code == 403 and CSRF_REFUSED in response.content, (
                f"POST {path} ({name}) without a token answered {response.status_code}"
            )
    missing = STATE_CHANGING - reached
    assert not missing, f"the sweep never reached {sorted(missing)}"
    assert len(reached) > len(STATE_CHANGING)  # admin and the rest were swept too


def test_the_same_posts_with_the_pages_token_get_past_the_csrf_check(settings):
    settings.LAB_LOCAL_CONTROLS = False
    settings.DEBUG = False
    paths = {name: path for path, name in _routes() if name in STATE_CHANGING}
    for name, path in sorted(paths.items()):
        client = _csrf_client(make_user(f"u-{len(name)}-{abs(hash(name))}", staff=False))
        token = client.cookies["csrftoken"].value
        response = client.post(path, {"x": "1"}, headers={"X-CSRFToken": token})
        assert CSRF_REFUSED not in response.content, f"{name} refused even with the token"
    assert not Run.objects.exists()  # the sample bodies are invalid: nothing was fired


def test_a_join_sent_with_the_token_from_the_pages_hx_headers_is_accepted(instructor_room):
    client = Client(enforce_csrf_checks=True)
    page = client.get(reverse("workshop:index")).content.decode()
    token = re.search(r"hx-headers='\{\"X-CSRFToken\": \"([^\"]+)\"\}'", page).group(1)
    response = client.post(
        reverse("workshop:join"),
        {"code": instructor_room.code, "nickname": "Ana"},
        headers={"X-CSRFToken": token},
    )
    assert response.status_code == 302
    assert instructor_room.seats.filter(nickname="Ana").exists()


# --- (b) WebSockets refuse a foreign Origin ---------------------------------------------------


@pytest.fixture
def instructor_room():
    staff = make_user("sec-instructor", staff=True)
    return rooms.room_create(instructor=staff, title="Security")


@asynctest
async def test_every_websocket_route_refuses_a_foreign_origin(instructor_room):
    room = instructor_room
    learner, session_key = await db(_learner_session)()
    run = await db(_finished_run)(learner)
    seat = await db(rooms.seat_join)(room=room, nickname="ana")
    staff_cookie = await db(session_cookie)(room.instructor)
    # One legitimate visitor per route: each opens with our origin, so a refusal is the origin's.
    visitors = {
        f"/ws/lab/runs/{run.id}/": f"sessionid={session_key}",
        f"/ws/workshop/{room.code}/": await db(seat_cookie)(seat),
        f"/ws/workshop/{room.code}/present/": staff_cookie,
        f"/ws/workshop/{room.code}/screen/": staff_cookie,
    }
    routed = set()
    for path in visitors:
        for route in websocket_urlpatterns:
            if route.pattern.match(path.lstrip("/")):
                routed.add(str(route.pattern))
    assert routed == {str(r.pattern) for r in websocket_urlpatterns}, "a route has no case here"
    for path, cookie in visitors.items():
        assert await _opens(path, origin=GOOD_ORIGIN[1], cookie=cookie), path
        for origin in FOREIGN_ORIGINS:
            assert not await _opens(path, origin=origin, cookie=cookie), (path, origin)
        no_origin = WebsocketCommunicator(
            application, path, headers=[(b"host", b"127.0.0.1"), (b"cookie", cookie.encode())]
        )
        assert not (await no_origin.connect(timeout=5))[0], f"{path} without an Origin"


async def _presenter_opens(room, cookie: str, origin: bytes, *, scheme: str = "ws", **h) -> bool:
    """The presenter's socket to a server at 127.0.0.1:8000 over `scheme`, from `origin`."""
    headers = [(b"origin", origin), (b"host", b"127.0.0.1:8000"), (b"cookie", cookie.encode())]
    headers += [(k.encode(), v.encode()) for k, v in h.items()]
    comm = WebsocketCommunicator(application, f"/ws/workshop/{room.code}/present/", headers)
    comm.scope["scheme"] = scheme  # read when the app first runs, at connect()
    connected, _ = await comm.connect(timeout=5)
    if connected:
        await comm.disconnect()
    return connected


@asynctest
async def test_a_socket_from_another_port_or_scheme_of_the_same_host_is_refused(instructor_room):
    cookie = await db(session_cookie)(instructor_room.instructor)
    assert await _presenter_opens(instructor_room, cookie, b"http://127.0.0.1:8000")
    assert not await _presenter_opens(instructor_room, cookie, b"http://127.0.0.1:9999")
    assert not await _presenter_opens(instructor_room, cookie, b"http://127.0.0.1")
    assert not await _presenter_opens(instructor_room, cookie, b"https://127.0.0.1:8000")
    assert await _presenter_opens(instructor_room, cookie, b"https://127.0.0.1:8000", scheme="wss")
    assert not await _presenter_opens(
        instructor_room, cookie, b"http://127.0.0.1:8000", scheme="wss"
    )


@asynctest
async def test_a_socket_origin_is_matched_like_djangos_csrf_trusted_origins(
    instructor_room, settings
):
    cookie = await db(session_cookie)(instructor_room.instructor)
    settings.CSRF_TRUSTED_ORIGINS = ["http://127.0.0.1:9999", "https://*.example.org"]
    assert await _presenter_opens(instructor_room, cookie, b"http://127.0.0.1:9999")
    assert await _presenter_opens(instructor_room, cookie, b"https://class.example.org")
    assert not await _presenter_opens(instructor_room, cookie, b"http://class.example.org")
    assert not await _presenter_opens(instructor_room, cookie, b"https://example.org.evil.net")
    # Behind a TLS proxy whose X-Forwarded-Proto is trusted, the page's origin is https.
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    forwarded = {"x-forwarded-proto": "https"}
    assert await _presenter_opens(instructor_room, cookie, b"https://127.0.0.1:8000", **forwarded)
    assert not await _presenter_opens(
        instructor_room, cookie, b"http://127.0.0.1:8000", **forwarded
    )


# --- (c) one learner cannot see or steer another's lab things ---------------------------------


def test_another_learners_runs_and_attempts_look_missing_on_every_page_and_export():
    owner, owner_key = _learner_session()
    _, other_key = _learner_session()
    run = _finished_run(owner)
    attempt = Attempt.objects.create(
        learner=owner, slug="countdown-within-timeout", runs={"main": run.id}
    )
    pages = [
        reverse("lab:run", args=[run.id]),
        reverse("lab:export_csv", args=[run.id]),
        reverse("lab:export_json", args=[run.id]),
        reverse("lab:experiments:run_charts", args=[run.id]),
        reverse("lab:experiments:attempt", args=[attempt.slug, attempt.id]),
        reverse("lab:experiments:status", args=[attempt.slug, attempt.id]),
    ]
    owner_client, other_client = _learner_client(owner_key), _learner_client(other_key)
    for url in pages:
        assert owner_client.get(url).status_code == 200, url
        assert other_client.get(url).status_code == 404, url
        assert Client().get(url).status_code == 404, url  # no session at all
    history = other_client.get(reverse("lab:history")).content.decode()
    assert run.id not in history


@asynctest
async def test_another_learners_run_socket_is_refused():
    owner, owner_key = await db(_learner_session)()
    _, other_key = await db(_learner_session)()
    run = await db(_finished_run)(owner)
    path = f"/ws/lab/runs/{run.id}/"
    assert await _opens(path, origin=GOOD_ORIGIN[1], cookie=f"sessionid={owner_key}")
    assert not await _opens(path, origin=GOOD_ORIGIN[1], cookie=f"sessionid={other_key}")
    assert not await _opens(path, origin=GOOD_ORIGIN[1])


# --- (d) worker controls are for staff unless the lab is local --------------------------------


def test_worker_controls_are_refused_to_non_staff_when_controls_are_not_local(settings):
    settings.LAB_LOCAL_CONTROLS = False
    settings.DEBUG = False
    learner = Client()
    learner.force_login(make_user("plain-learner", staff=False))
    for client in (learner, Client()):
        assert client.get(reverse("lab:workers")).status_code == 403
        for action in ("shutdown", "crash", "restart"):
            url = reverse("lab:worker_action", args=["redis-short-1@test", action])
            response = client.post(url)
            assert response.status_code == 403, action
            assert b"Worker controls" in response.content
    staff = Client()
    staff.force_login(make_user("lab-staff", staff=True))
    assert staff.get(reverse("lab:workers")).status_code == 200
    # A worker name nobody runs: staff get past the permission check to the "no such worker".
    response = staff.post(reverse("lab:worker_action", args=["no-such-worker", "restart"]))
    assert response.status_code != 403


# --- (e) lesson Markdown is sanitised ---------------------------------------------------------

HOSTILE_MARKDOWN = (
    '\n\n<script>alert("tier")</script> [docs](javascript:alert(1)) '
    '<img src=x onerror="alert(2)"> <a href="JaVaScRiPt:alert(3)">x</a> '
    '<iframe src="https://evil.example"></iframe> <a href="data:text/html,hi">d</a>\n'
)


def _assert_clean(html: str) -> None:
    lowered = html.lower()
    for bad in ("<script", "javascript:", "onerror", "<iframe", "data:text/html"):
        assert bad not in lowered, bad


def test_a_lesson_with_script_and_javascript_links_renders_sanitised(tmp_path, settings):
    data = yaml.safe_load((LESSON_FIXTURES / "01-fixture-countdown.yaml").read_text())
    data["prompt"] += '\n<script>alert("prompt")</script>\n'
    data["tiers"]["basics"] += HOSTILE_MARKDOWN
    (tmp_path / "01-hostile.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    shutil.copy(LESSON_FIXTURES / "02-fixture-acks-late.yaml", tmp_path)
    settings.LESSONS_DIR = tmp_path
    page = Client().get(reverse("lessons:tier", args=[data["slug"], "basics"]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Not in Redis as you might expect" in html  # the tier itself did render
    body = html.split("<body", 1)[1]
    _assert_clean(re.sub(r"<script[^>]*\bsrc=[^>]*></script>", "", body))  # our own JS files

    from django.template import engines

    rendered = (
        engines["django"]
        .from_string("{% load lesson_tags %}{{ text|markdown }}")
        .render({"text": HOSTILE_MARKDOWN})
    )
    _assert_clean(rendered)
    assert "docs" in rendered  # the link text stays, only the href goes

"""Shared fixtures: a live ASGI server and a Chromium page driven by Playwright."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.stack import BASE_DIR, missing
from tests.support.servers import LiveServer

CHROMIUM = os.environ.get("TEACHLAB_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = BASE_DIR / "test-artifacts"
# Debian's Chromium as root in a closed network: these flags keep it quiet and working.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def live_server_url():
    """The whole app over HTTP and WebSockets (daphne), local worker controls on."""
    server = LiveServer(
        TEACHLAB_LOCAL_CONTROLS="1", TEACHLAB_ALLOWED_HOSTS="127.0.0.1,localhost"
    ).start()
    yield server.url
    server.stop()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        missing(f"Chromium not found at {CHROMIUM} (apt install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, request):
    """A fresh browser context per test; a screenshot is kept when the test fails."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    ARTIFACTS.mkdir(exist_ok=True)
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        page.screenshot(path=str(ARTIFACTS / f"FAILED-{request.node.name}.png"), full_page=True)
    context.close()


# Fixtures that start what the fast loop leaves out; a test using one gets its marker.
BROKER_FIXTURES = {"lab_stack", "fired_runs", "room_lab", "drill_stack"}
BROWSER_FIXTURES = {"browser", "page"}


def markers_for(fixturenames, path: str) -> set[str]:
    """The markers a test earns by what it uses and where it lives (path from the checkout)."""
    used, found = set(fixturenames), set()
    if used & BROKER_FIXTURES:
        found.add("broker")
    if used & BROWSER_FIXTURES:
        found.add("browser")
    if path.startswith("tests/drills/"):
        found.add("drill")
    if path.startswith("tests/fuzz/") and path.endswith("_fuzz.py"):
        found.add("fuzz")
    return found


def pytest_collection_modifyitems(items) -> None:
    """Markers from what a test uses and where it lives, so none depends on a module
    remembering its pytestmark: `scripts/test --fast` deselects by them."""
    for item in items:
        path = item.path.relative_to(BASE_DIR).as_posix()
        for name in markers_for(getattr(item, "fixturenames", ()), path):
            item.add_marker(name)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(autouse=True)
def _quick_password_hashing(settings):
    """Passwords hashed in the test process with MD5 first: PBKDF2's million rounds cost about
    a second a hash on this machine under load, paid by every user made and every sign-in
    tried. PBKDF2 stays listed, so a hash made the slow way still checks; servers and workers
    in subprocesses keep the project's own hashers."""
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    ]


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    """Every test starts with no rate-limit budget spent (teachlab/core/ratelimits.py): counts live
    in the session's Redis and would otherwise leak from one test into the next."""
    import redis

    from teachlab.core import ratelimits

    try:
        ratelimits.clear_all()
    except redis.RedisError:
        pass  # a test that points REDIS_URL nowhere, or before the server is up
    yield

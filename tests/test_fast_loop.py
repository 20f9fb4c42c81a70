"""The fast loop (docs/testing.md): tests are marked by what they use and where they live, and
loading the test plugin starts no service; a pytest started inside another sets up its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import markers_for
from tests.stack import BASE_DIR, GIVEN

FAST = "not broker and not browser and not slow and not drill and not fuzz"


@pytest.mark.parametrize(
    ("fixtures", "path", "expected"),
    [
        ({"db", "lab_stack"}, "tests/lab/test_cli.py", {"broker"}),
        ({"fired_runs"}, "tests/lab/test_lanes_redis.py", {"broker"}),
        ({"room_lab", "page"}, "tests/workshop/test_browser.py", {"broker", "browser"}),
        ({"browser"}, "tests/test_csp_browser.py", {"browser"}),
        ({"drill_stack"}, "tests/drills/test_worker_killed.py", {"broker", "drill"}),
        (set(), "tests/fuzz/test_http_fuzz.py", {"fuzz"}),
        (set(), "tests/fuzz/test_targets_complete.py", set()),
        ({"db", "settings", "client"}, "tests/lab/test_views.py", set()),
    ],
)
def test_a_test_is_marked_by_the_fixtures_it_uses_and_where_it_lives(fixtures, path, expected):
    assert markers_for(fixtures, path) == expected


def test_every_collected_test_that_uses_a_worker_or_browser_fixture_carries_its_marker(request):
    unmarked = [
        item.nodeid
        for item in request.session.items
        for name in markers_for(getattr(item, "fixturenames", ()), "")
        if item.get_closest_marker(name) is None
    ]
    assert not unmarked


def _fresh_session(code: str, **env: str) -> dict:
    """`code` after the plugin's load hook, in a new interpreter whose environment is the one
    this session was given (or `env`); it prints a JSON object."""
    given = json.loads(os.environ[GIVEN])
    base = {k: v for k, v in os.environ.items() if k not in (GIVEN, *given)}
    base.update({k: v for k, v in given.items() if v is not None})
    prelude = (
        "import json, os, socket\n"
        "from tests import stack\n"
        "stack.pytest_load_initial_conftests(None, None, [])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + code],
        cwd=BASE_DIR,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_loading_the_plugin_starts_no_redis_collects_nothing_and_makes_no_live_database():
    seen = _fresh_session(
        "def answers(port):\n"
        "    try:\n"
        "        socket.create_connection(('127.0.0.1', port), timeout=1).close()\n"
        "        return True\n"
        "    except OSError:\n"
        "        return False\n"
        "port = stack.REDIS.port\n"
        "before = answers(port)\n"
        "static = os.listdir(os.environ['TEACHLAB_STATIC_ROOT'])\n"
        "live = stack.LIVE_DATABASE_URL\n"
        "stack.REDIS.start()\n"
        "after = answers(port)\n"
        "stack.REDIS.stop()\n"
        "print(json.dumps({'before': before, 'after': after, 'static': static,\n"
        "                  'live': live, 'url': os.environ['TEACHLAB_REDIS_URL'],\n"
        "                  'port': port}))\n"
    )
    assert seen["url"] == f"redis://127.0.0.1:{seen['port']}"
    assert (seen["before"], seen["after"]) == (False, True)
    assert seen["static"] == [] and seen["live"] == ""


def test_a_pytest_inside_another_gets_a_redis_of_its_own_not_the_parents():
    """An xdist worker inherits the environment its controller's load hook changed."""
    parent = "redis://127.0.0.1:1"
    given = json.loads(os.environ[GIVEN])
    seen = _fresh_session(
        "print(json.dumps({'url': os.environ['TEACHLAB_REDIS_URL'],\n"
        "                  'own': stack.REDIS is not None}))\n",
        **{GIVEN: json.dumps({**given, "TEACHLAB_REDIS_URL": None}), "TEACHLAB_REDIS_URL": parent},
    )
    assert seen["own"] and seen["url"] != parent


def test_scripts_test_fast_selects_with_the_documented_expression():
    assert f'FAST_MARKERS="{FAST}"' in (BASE_DIR / "scripts" / "test").read_text()
    assert f'-m "{FAST}"' in (BASE_DIR / "docs" / "testing.md").read_text()


def test_the_fast_loop_measurement_reads_pytests_closing_counts():
    sys.path.insert(0, str(BASE_DIR / "scripts"))
    try:
        from measure_fast_loop import outcome_counts
    finally:
        sys.path.remove(str(BASE_DIR / "scripts"))
    output = "..F\n=== 1 failed, 713 passed, 5 skipped, 214 deselected in 98.20s ===\n"
    assert outcome_counts(output) == {"failed": 1, "passed": 713, "skipped": 5, "deselected": 214}
    assert outcome_counts("ERROR: no such file\n") == {}

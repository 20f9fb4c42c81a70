"""DATABASE_URL picks PostgreSQL; unset, SQLite in WAL mode stays the embedded default.

Settings are read once per process, so each case is a fresh interpreter, as a worker is."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.stack import BASE_DIR
from tests.stack import test_env as stack_env

SHOW = (
    "import json, django; django.setup(); from django.conf import settings; "
    "d = settings.DATABASES['default']; "
    "print(json.dumps({k: str(d.get(k)) for k in ('ENGINE', 'NAME', 'HOST', 'PORT', 'USER', "
    "'CONN_MAX_AGE')} | {'options': d.get('OPTIONS', {})}))"
)


def database_seen(**env: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", SHOW],
        cwd=BASE_DIR,
        env={k: v for k, v in stack_env(**env).items() if k != "DATABASE_URL" or v},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def test_database_url_selects_postgresql_with_a_bounded_pool_per_process():
    seen = database_seen(DATABASE_URL="postgres://ann:pw@db.example:6543/teachlab")
    assert seen["ENGINE"] == "django.db.backends.postgresql"
    assert (seen["HOST"], seen["PORT"], seen["USER"], seen["NAME"]) == (
        "db.example",
        "6543",
        "ann",
        "teachlab",
    )
    assert seen["CONN_MAX_AGE"] == "0"  # ASGI: no persistent connections
    assert seen["options"]["pool"] == {"min_size": 1, "max_size": 10, "timeout": 10.0}


def test_pool_size_zero_turns_the_pool_off_and_conn_max_age_applies_again():
    seen = database_seen(
        DATABASE_URL="postgres://ann:pw@db.example:6543/teachlab",
        TEACHLAB_DB_POOL_SIZE="0",
        TEACHLAB_DB_CONN_MAX_AGE="60",
    )
    assert "pool" not in seen["options"]
    assert seen["CONN_MAX_AGE"] == "60"


def test_without_database_url_sqlite_in_wal_mode_at_teachlab_db_path(tmp_path):
    path = tmp_path / "here.sqlite3"
    seen = database_seen(DATABASE_URL="", TEACHLAB_DB_PATH=str(path))
    assert seen["ENGINE"] == "django.db.backends.sqlite3"
    assert seen["NAME"] == str(path)
    assert "journal_mode=WAL" in seen["options"]["init_command"]
    assert seen["options"]["transaction_mode"] == "IMMEDIATE"


def test_the_monitor_keeps_its_connection_without_breaking_the_pool():
    """The monitor makes its connection persistent (no reconnect per batch); beside a pool
    Django refuses CONN_MAX_AGE, which stopped every settle ("Pooling doesn't support
    persistent connections") and no shared run got its outcome."""
    from tests import stack

    if not stack.live_database_url():
        pytest.skip("the pool is PostgreSQL's; this run is on SQLite")
    code = (
        "import django; django.setup()\n"
        "from teachlab.lab.eventlog.monitor import monitor_process_setup\n"
        "monitor_process_setup()\n"
        "from django.db import connection\n"
        "with connection.cursor() as cursor:\n"
        "    cursor.execute('SELECT 1')\n"
        "    print(cursor.fetchone()[0] == 1)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=BASE_DIR,
        env=stack_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "True"

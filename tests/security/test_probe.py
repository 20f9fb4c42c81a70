"""The probe suite (scripts/probe) against production mode: `scripts/serve` with DEBUG off, a
strong key and PostgreSQL when the suite has it, over plain HTTP as classroom mode runs."""

from __future__ import annotations

import secrets
import subprocess

import pytest

from tests import stack
from tests.stack import BASE_DIR, manage
from tests.test_multiprocess import Served

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def production_server():
    manage("migrate", "--noinput", "-v", "0")
    manage("synclessons")
    server = Served("probe").start(
        TEACHLAB_DEBUG="0",
        TEACHLAB_SECRET_KEY=secrets.token_urlsafe(50),
        TEACHLAB_ALLOWED_HOSTS="127.0.0.1",
        TEACHLAB_SECURE_COOKIES="0",
        TEACHLAB_HSTS_SECONDS="0",
        TEACHLAB_SSL_REDIRECT="0",
        TEACHLAB_PROXY_SSL_HEADER="0",
    )
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def test_every_probe_holds_against_production_mode(production_server):
    done = subprocess.run(
        [str(BASE_DIR / "scripts" / "probe"), "--url", production_server.url],
        cwd=BASE_DIR,
        env=stack.test_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    print(done.stdout)
    lines = done.stdout.strip().splitlines()
    assert lines and lines[-1].endswith("probes held"), done.stdout + done.stderr
    held, _, total = lines[-1].split()[:3]
    assert int(total) >= 19, "the suite lost probes"
    assert done.returncode == 0 and held == total, done.stdout + done.stderr

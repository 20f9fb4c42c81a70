"""Production mode (TEACHLAB_DEBUG=0) is secure by default: each setting is read by a fresh
Python process from the environment a deployment would give it, as a server would start."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys

import pytest
from django.test import Client
from django.urls import reverse

from teachlab.core.hardening import LOCAL_SECRET_KEY, secret_key_problem
from tests.stack import BASE_DIR
from tests.workshop.conftest import make_user

STRONG_KEY = secrets.token_urlsafe(50)  # 67 characters
PRINTED = [
    "DEBUG",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SESSION_COOKIE_AGE",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_SSL_REDIRECT",
    "SECURE_PROXY_SSL_HEADER",
    "CONTENT_SECURITY_POLICY",
]


def deployment_env(**extra: str) -> dict[str, str]:
    """The test environment without any TEACHLAB_ choice of ours except where the services
    are, plus what a deployment would set."""
    keep = {"TEACHLAB_REDIS_URL", "TEACHLAB_DB_PATH", "TEACHLAB_CHANNEL_PREFIX"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEACHLAB_") or k in keep}
    env["DJANGO_SETTINGS_MODULE"] = "teachlab.settings"
    env.update(extra)
    return env


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=BASE_DIR,
        env=deployment_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def settings_in(**env: str) -> dict:
    code = (
        "import json; from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n) for n in {PRINTED!r}}}))"
    )
    done = run_python(code, **env)
    assert done.returncode == 0, done.stderr
    return {**json.loads(done.stdout.splitlines()[-1]), "stderr": done.stderr}


def production(**extra: str) -> dict[str, str]:
    return {"TEACHLAB_DEBUG": "0", "TEACHLAB_SECRET_KEY": STRONG_KEY, **extra}


# --- the secret key --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [None, LOCAL_SECRET_KEY, "short-key", "ab" * 40, "django-insecure-" + STRONG_KEY],
    ids=["unset", "local-default", "short", "few-characters", "django-insecure"],
)
def test_production_mode_refuses_to_start_without_a_strong_key_naming_the_variable(key):
    env = {"TEACHLAB_DEBUG": "0"}
    if key is not None:
        env["TEACHLAB_SECRET_KEY"] = key
    done = run_python("import django; django.setup()", **env)
    assert done.returncode != 0
    assert "ImproperlyConfigured: TEACHLAB_SECRET_KEY" in done.stderr
    assert "TEACHLAB_DEBUG=0" in done.stderr


def test_a_random_fifty_character_key_is_accepted_and_the_rules_match_djangos():
    assert secret_key_problem(secrets.token_urlsafe(38)[:50]) == ""
    assert "49 characters" in secret_key_problem("x1" * 24 + "y")
    assert "different characters" in secret_key_problem("abcd" * 20)


def test_the_local_default_still_starts_a_debug_run():
    done = run_python("import django; django.setup(); print('started')")
    assert done.returncode == 0 and "started" in done.stdout, done.stderr


# --- HTTPS protections -----------------------------------------------------------------------


def test_production_mode_turns_on_secure_cookies_hsts_ssl_redirect_and_the_proxy_header():
    found = settings_in(**production())
    assert found["DEBUG"] is False
    assert found["SESSION_COOKIE_SECURE"] is True
    assert found["CSRF_COOKIE_SECURE"] is True
    assert found["SECURE_HSTS_SECONDS"] >= 60 * 60 * 24 * 365
    assert found["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True
    assert found["SECURE_HSTS_PRELOAD"] is True
    assert found["SECURE_SSL_REDIRECT"] is True
    assert found["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert found["SESSION_COOKIE_AGE"] == 14 * 24 * 60 * 60
    assert "WARNING" not in found["stderr"]


def test_each_protection_turned_off_for_a_plain_http_room_is_named_in_a_warning():
    toggles = ("SECURE_COOKIES", "HSTS_SECONDS", "SSL_REDIRECT", "PROXY_SSL_HEADER")
    found = settings_in(**production(**{f"TEACHLAB_{t}": "0" for t in toggles}))
    assert found["SESSION_COOKIE_SECURE"] is False and found["CSRF_COOKIE_SECURE"] is False
    assert found["SECURE_HSTS_SECONDS"] == 0 and found["SECURE_HSTS_PRELOAD"] is False
    assert found["SECURE_SSL_REDIRECT"] is False
    assert found["SECURE_PROXY_SSL_HEADER"] is None
    assert "WARNING teachlab" in found["stderr"]
    for toggle in toggles:
        assert f"TEACHLAB_{toggle}=0" in found["stderr"]
    one = settings_in(**production(TEACHLAB_SSL_REDIRECT="0"))
    assert one["SECURE_SSL_REDIRECT"] is False and one["SESSION_COOKIE_SECURE"] is True
    assert "TEACHLAB_SSL_REDIRECT=0" in one["stderr"]
    assert "TEACHLAB_SECURE_COOKIES" not in one["stderr"]


def test_session_length_is_a_setting():
    assert settings_in(**production(TEACHLAB_SESSION_DAYS="1"))["SESSION_COOKIE_AGE"] == 86400


def test_a_debug_run_keeps_https_protections_off_but_the_csp_on():
    found = settings_in(TEACHLAB_DEBUG="1")
    assert found["SESSION_COOKIE_SECURE"] is False and found["SECURE_SSL_REDIRECT"] is False
    assert found["CONTENT_SECURITY_POLICY"]["DIRECTIVES"]["script-src"] == ["'self'"]


def test_check_deploy_prints_no_warnings_with_a_random_key_and_allowed_hosts():
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE_DIR,
        env=deployment_env(
            TEACHLAB_DEBUG="0",
            TEACHLAB_SECRET_KEY=secrets.token_urlsafe(38)[:50],
            TEACHLAB_ALLOWED_HOSTS="teachlab.example.org",
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout
    assert "WARNING" not in done.stderr


# --- responses: CSP and worker controls -------------------------------------------------------


@pytest.mark.django_db
def test_every_page_carries_the_content_security_policy():
    response = Client().get(reverse("lessons:index"))
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy


@pytest.mark.django_db
def test_debug_does_not_open_worker_controls(settings):
    settings.DEBUG = True
    settings.LAB_LOCAL_CONTROLS = False
    anonymous = Client()
    assert anonymous.get(reverse("lab:workers")).status_code == 403
    url = reverse("lab:worker_action", args=["redis-short-1@test", "crash"])
    assert anonymous.post(url).status_code == 403
    learner = Client()
    learner.force_login(make_user("debug-learner", staff=False))
    assert learner.get(reverse("lab:workers")).status_code == 403

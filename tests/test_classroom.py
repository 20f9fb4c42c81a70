"""Classroom mode's defaults (`scripts/run --classroom`), and the presenter's warning when the
join address it projects is a loopback one."""

from __future__ import annotations

import stat

import pytest
from django.test import Client
from django.urls import reverse

from teachlab.core.classroom import classroom_apply, classroom_env, classroom_secret, lan_addresses
from teachlab.core.hardening import secret_key_problem
from teachlab.workshop import rooms
from teachlab.workshop.joinlink import host_is_loopback
from tests.workshop.conftest import make_user


def test_classroom_env_is_production_mode_over_plain_http_for_the_lan():
    env = classroom_env(secret="k" * 60, addresses=["192.168.1.20", "10.0.0.5"], port=8000)
    assert env["TEACHLAB_DEBUG"] == "0"
    assert env["TEACHLAB_LOCAL_CONTROLS"] == "0"
    assert env["TEACHLAB_SECRET_KEY"] == "k" * 60
    assert env["TEACHLAB_HOST"] == "0.0.0.0"  # noqa: S104
    assert env["TEACHLAB_ALLOWED_HOSTS"].split(",") == [
        "192.168.1.20",
        "10.0.0.5",
        "localhost",
        "127.0.0.1",
        "[::1]",
    ]
    origins = env["TEACHLAB_CSRF_TRUSTED_ORIGINS"].split(",")
    assert "http://192.168.1.20:8000" in origins and "http://localhost:8000" in origins
    for toggle in ("SECURE_COOKIES", "HSTS_SECONDS", "SSL_REDIRECT", "PROXY_SSL_HEADER"):
        assert env[f"TEACHLAB_{toggle}"] == "0"
    assert int(env["TEACHLAB_LAB_CLASS_RUNS_PER_MINUTE"]) > 0
    assert env["TEACHLAB_PUBLIC_URL"] == "http://192.168.1.20:8000"


def test_without_a_lan_address_no_public_url_is_guessed():
    env = classroom_env(secret="k" * 60, addresses=[], port=9000)
    assert "TEACHLAB_PUBLIC_URL" not in env
    assert env["TEACHLAB_ALLOWED_HOSTS"] == "localhost,127.0.0.1,[::1]"


def test_the_secret_is_made_once_strong_and_readable_by_its_owner_only(tmp_path):
    key = classroom_secret(tmp_path)
    assert secret_key_problem(key) == ""
    mode = stat.S_IMODE((tmp_path / "classroom-secret-key").stat().st_mode)
    assert mode == 0o600
    assert classroom_secret(tmp_path) == key  # the same key on the next start


def test_applying_forces_debug_and_controls_off_but_keeps_the_instructors_choices(tmp_path):
    environ = {
        "TEACHLAB_DEBUG": "1",
        "TEACHLAB_LOCAL_CONTROLS": "1",
        "TEACHLAB_PUBLIC_URL": "http://room.example:8000",
        "TEACHLAB_PORT": "8123",
    }
    classroom_apply(environ=environ, var_dir=tmp_path)
    assert environ["TEACHLAB_DEBUG"] == "0"
    assert environ["TEACHLAB_LOCAL_CONTROLS"] == "0"
    assert environ["TEACHLAB_PUBLIC_URL"] == "http://room.example:8000"
    assert "http://localhost:8123" in environ["TEACHLAB_CSRF_TRUSTED_ORIGINS"]
    assert environ["TEACHLAB_SECRET_KEY"] == classroom_secret(tmp_path)


def test_lan_addresses_are_this_machines_and_never_loopback():
    found = lan_addresses()
    assert all(not host_is_loopback(a) for a in found)
    assert all(not a.startswith("169.254.") for a in found)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("127.3.2.1", True),
        ("[::1]", True),
        ("0.0.0.0", True),  # noqa: S104
        ("app.localhost", True),
        ("192.168.1.20", False),
        ("teachlab.example.org", False),
    ],
)
def test_loopback_hosts(host, loopback):
    assert host_is_loopback(host) is loopback


@pytest.mark.django_db
def test_the_presenter_is_warned_when_the_join_address_is_loopback(settings):
    settings.WORKSHOP_PUBLIC_URL = ""
    settings.ALLOWED_HOSTS = ["localhost", "192.168.1.20"]
    staff = make_user("room-host", staff=True)
    room = rooms.room_create(instructor=staff, title="Loopback")
    client = Client()
    client.force_login(staff)
    url = reverse("workshop:present", args=[room.code])
    page = client.get(url, HTTP_HOST="localhost").content.decode()
    assert "Participants cannot use this address" in page
    assert "TEACHLAB_PUBLIC_URL" in page

    page = client.get(url, HTTP_HOST="192.168.1.20").content.decode()
    assert "Participants cannot use this address" not in page
    assert f"http://192.168.1.20/workshop/join/?code={room.code}" in page

    settings.WORKSHOP_PUBLIC_URL = "http://10.0.0.5:8000"
    page = client.get(url, HTTP_HOST="localhost").content.decode()
    assert "Participants cannot use this address" not in page
    assert f"http://10.0.0.5:8000/workshop/join/?code={room.code}" in page

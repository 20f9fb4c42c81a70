"""Password guessing is throttled per client address and username on both sign-in pages, with
a message and HTTP 429, never a 500; counts live in the session's real Redis."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from teachlab.lab.store import app_redis
from tests.workshop.conftest import make_user

pytestmark = pytest.mark.django_db
PASSWORD = "workshop-pass-123"
SIGNIN_PAGES = ["/accounts/login/", "/admin/login/"]


@pytest.fixture(autouse=True)
def _fresh_counts(settings):
    settings.SIGNIN_MAX_FAILURES = 3
    settings.SIGNIN_WINDOW_SECONDS = 60
    for key in app_redis().scan_iter("signin:fail:*"):
        app_redis().delete(key)


def _sign_in(client: Client, page: str, username: str, password: str, address: str):
    return client.post(page, {"username": username, "password": password}, REMOTE_ADDR=address)


@pytest.mark.parametrize("page", SIGNIN_PAGES)
def test_after_n_failures_even_the_right_password_is_refused_with_429_and_a_message(page):
    make_user("guessed", staff=True)
    client = Client()
    for _ in range(3):
        response = _sign_in(client, page, "guessed", "wrong-password", "203.0.113.5")
        assert response.status_code == 200  # the form again, with "please enter a correct..."
    response = _sign_in(client, page, "guessed", PASSWORD, "203.0.113.5")
    assert response.status_code == 429
    assert b"Too many failed sign-ins" in response.content
    assert "_auth_user_id" not in client.session


def test_the_limit_is_per_address_and_username():
    make_user("guessed", staff=False)
    make_user("other", staff=False)
    for _ in range(3):
        _sign_in(Client(), "/accounts/login/", "Guessed", "nope", "203.0.113.5")
    blocked = _sign_in(Client(), "/accounts/login/", "guessed", PASSWORD, "203.0.113.5")
    assert blocked.status_code == 429  # usernames compare case-insensitively
    elsewhere = _sign_in(Client(), "/accounts/login/", "guessed", PASSWORD, "198.51.100.9")
    assert elsewhere.status_code == 302
    other_user = _sign_in(Client(), "/accounts/login/", "other", PASSWORD, "203.0.113.5")
    assert other_user.status_code == 302


def test_a_successful_sign_in_clears_the_count():
    make_user("forgetful", staff=False)
    for _ in range(2):
        _sign_in(Client(), "/accounts/login/", "forgetful", "nope", "203.0.113.5")
    assert (
        _sign_in(Client(), "/accounts/login/", "forgetful", PASSWORD, "203.0.113.5").status_code
        == 302
    )
    for _ in range(2):
        _sign_in(Client(), "/accounts/login/", "forgetful", "nope", "203.0.113.5")
    assert (
        _sign_in(Client(), "/accounts/login/", "forgetful", PASSWORD, "203.0.113.5").status_code
        == 302
    )


def test_sign_in_still_works_when_the_apps_redis_is_down(settings):
    from teachlab.lab.store import _client
    from tests.stack import free_port

    make_user("offline", staff=False)
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}"
    try:
        wrong = _sign_in(Client(), "/accounts/login/", "offline", "nope", "203.0.113.5")
        right = _sign_in(Client(), reverse("login"), "offline", PASSWORD, "203.0.113.5")
    finally:
        _client.cache_clear()
    assert wrong.status_code == 200
    assert right.status_code == 302

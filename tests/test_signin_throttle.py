"""Password guessing is throttled (django-axes) per client address and normalised username on
both sign-in pages, with a message and HTTP 429, never a 500. Every spelling of a name that
Django's sign-in folds to it (NFKC) is throttled as that name (issue 26, finding 1)."""

from __future__ import annotations

import unicodedata

import pytest
from django.test import Client
from django.urls import reverse

from tests.workshop.conftest import make_user

pytestmark = pytest.mark.django_db
PASSWORD = "workshop-pass-123"
SIGNIN_PAGES = ["/accounts/login/", "/admin/login/"]


@pytest.fixture(autouse=True)
def _fresh_counts(settings):
    settings.SIGNIN_MAX_FAILURES = settings.AXES_FAILURE_LIMIT = 3
    settings.SIGNIN_WINDOW_SECONDS = 60


def _sign_in(client: Client, page: str, username: str, password: str, address: str):
    return client.post(page, {"username": username, "password": password}, REMOTE_ADDR=address)


@pytest.mark.parametrize("page", SIGNIN_PAGES)
def test_after_n_failures_even_the_right_password_is_refused_with_429_and_a_message(page):
    make_user("guessed", staff=True)
    client = Client()
    for _ in range(2):
        response = _sign_in(client, page, "guessed", "wrong-password", "203.0.113.5")
        assert response.status_code == 200  # the form again, with "please enter a correct..."
    # django-axes answers the failure that reaches the limit with the lockout itself.
    response = _sign_in(client, page, "guessed", "wrong-password", "203.0.113.5")
    assert response.status_code == 429
    assert response["Retry-After"] == "60"
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
    from teachlab.lab.runs.store import _client
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


def _spellings_of(letter: str) -> list[str]:
    """Every code point that NFKC (Django's UsernameField) folds to `letter` in either case:
    full-width, mathematical bold/italic/script/fraktur, circled, modifier letters..."""
    wanted = {letter.lower(), letter.upper()}
    return [chr(c) for c in range(0x110000) if unicodedata.normalize("NFKC", chr(c)) in wanted]


def _bob_spellings() -> list[str]:
    bs, os_ = _spellings_of("b"), _spellings_of("o")
    n = max(len(bs), len(os_))
    return [bs[i % len(bs)] + os_[i % len(os_)] + bs[(i + 1) % len(bs)] for i in range(n)]


BOB_SPELLINGS = _bob_spellings()


@pytest.mark.parametrize("page", SIGNIN_PAGES)
def test_every_unicode_spelling_of_a_throttled_name_is_throttled_too(page):
    make_user("bob", staff=True)
    assert len(BOB_SPELLINGS) > 20
    for _ in range(3):
        _sign_in(Client(), page, "bob", "wrong-password", "203.0.113.7")
    let_in = []
    for spelling in ["\uff42\uff4f\uff42", *BOB_SPELLINGS]:  # ｂｏｂ (full-width) first
        client = Client()
        response = _sign_in(client, page, spelling, PASSWORD, "203.0.113.7")
        if response.status_code != 429 or "_auth_user_id" in client.session:
            let_in.append((spelling, response.status_code))
        else:
            assert b"Too many failed sign-ins" in response.content
    assert not let_in


@pytest.mark.parametrize("spelling", ["\uff42\uff4f\uff42", "BOB", BOB_SPELLINGS[5]])
def test_failures_under_a_unicode_spelling_throttle_the_plain_name(spelling):
    make_user("bob", staff=False)
    for _ in range(3):
        _sign_in(Client(), "/accounts/login/", spelling, "wrong-password", "203.0.113.8")
    response = _sign_in(Client(), "/accounts/login/", "bob", PASSWORD, "203.0.113.8")
    assert response.status_code == 429


def test_a_forwarded_header_does_not_move_the_count_without_a_trusted_proxy(settings):
    settings.TRUSTED_PROXIES = []
    make_user("carol", staff=False)
    for n in range(3):
        Client().post(
            "/accounts/login/",
            {"username": "carol", "password": "nope"},
            REMOTE_ADDR="203.0.113.9",
            HTTP_X_FORWARDED_FOR=f"198.51.100.{n}",
        )
    response = Client().post(
        "/accounts/login/",
        {"username": "carol", "password": PASSWORD},
        REMOTE_ADDR="203.0.113.9",
        HTTP_X_FORWARDED_FOR="198.51.100.200",
    )
    assert response.status_code == 429


@pytest.mark.parametrize("page", SIGNIN_PAGES)
def test_an_overlong_username_is_a_failed_sign_in_not_a_database_error(page):
    # axes records a failure under the username in a 255-character column; PostgreSQL refuses
    # a longer value where SQLite would keep it, so only the PostgreSQL run pins this.
    response = _sign_in(Client(), page, "x" * 400, "wrong-password", "203.0.113.5")
    assert response.status_code == 200


def test_a_sign_in_made_in_code_with_no_client_address_is_recorded():
    # force_login() sends no REMOTE_ADDR; axes logs the address in an IP column that
    # PostgreSQL checks, so the address given to axes is None rather than a word.
    client = Client()
    client.force_login(make_user("coded", staff=False))
    assert "_auth_user_id" in client.session

"""The theme choice: served in the HTML (no script decides it), kept on the learner's row when
there is one and in a cookie otherwise, and choosing it never makes a learner."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from lessons.learners import NOBODY_KEY
from lessons.models import Learner
from lessons.themes import COOKIE_NAME

pytestmark = pytest.mark.django_db


def dark_media(html: str) -> str:
    """The media the page's dark stylesheet loads with (static names may carry a hash)."""
    return re.search(r'href="[^"]*/dark[^"]*\.css" media="([^"]*)"', html).group(1)


def choose(client: Client, theme: str, **extra) -> object:
    return client.post("/settings/theme/", {"theme": theme, "next": "/glossary/"}, **extra)


def test_a_newcomer_is_served_the_system_theme():
    html = Client().get("/").content.decode()
    assert '<html lang="en" data-theme="system">' in html
    assert dark_media(html) == "screen and (prefers-color-scheme: dark)"


def test_a_newcomer_choosing_dark_keeps_it_in_a_cookie_and_gets_no_learner_row():
    client = Client()
    rows = Learner.objects.exclude(key=NOBODY_KEY).count()
    response = choose(client, "dark")
    assert response.status_code == 302 and response["Location"] == "/glossary/"
    assert response.cookies[COOKIE_NAME].value == "dark"
    assert Learner.objects.exclude(key=NOBODY_KEY).count() == rows  # the shared empty one aside
    html = client.get("/glossary/").content.decode()
    assert 'data-theme="dark"' in html and dark_media(html) == "screen"
    assert 'value="dark" data-dark-media="screen" aria-pressed="true"' in html


def test_light_chosen_keeps_the_dark_colours_off_whatever_the_system_prefers():
    client = Client()
    choose(client, "light")
    assert dark_media(client.get("/").content.decode()) == "not all"


def test_a_learners_choice_is_on_their_row_and_follows_them_to_another_device():
    user = get_user_model().objects.create_user("themed", password="pw-themed-123!")
    laptop, phone = Client(), Client()
    laptop.force_login(user)
    assert choose(laptop, "dark", HTTP_X_THEME_SWITCH="1").status_code == 204
    assert Learner.objects.get(user=user).theme == "dark"
    phone.force_login(user)  # no theme cookie here
    assert 'data-theme="dark"' in phone.get("/").content.decode()


def test_the_row_wins_over_an_old_cookie():
    user = get_user_model().objects.create_user("themed2", password="pw-themed-123!")
    Learner.objects.create(user=user, theme="light")
    client = Client()
    client.cookies[COOKIE_NAME] = "dark"
    client.force_login(user)
    assert 'data-theme="light"' in client.get("/").content.decode()


def test_an_unknown_theme_is_refused_and_a_bad_cookie_is_the_system_theme():
    client = Client()
    assert choose(client, "sepia").status_code == 400
    client.cookies[COOKIE_NAME] = "sepia"
    assert 'data-theme="system"' in client.get("/").content.decode()


def test_the_switch_sends_back_only_to_a_page_of_this_site():
    response = Client().post("/settings/theme/", {"theme": "dark", "next": "https://evil.test/"})
    assert response["Location"] == "/"

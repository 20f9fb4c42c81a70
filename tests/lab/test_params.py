"""One run-parameter schema: the lab form, `lab run` and a workshop room refuse the same value
with the same words, and experiment files are checked by the same rules."""

from __future__ import annotations

import html

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from lessons.learners import SESSION_KEY
from lessons.models import Learner
from teachlab.lab.models import Run
from teachlab.lab.runs.errors import LabInputError, LabLimitError
from teachlab.lab.runs.params import PARAMS, RunParams, params_limits_check, params_parse
from teachlab.workshop import rooms

pytestmark = pytest.mark.django_db


def _message(countdown: str) -> str:
    """What the schema says about this countdown (a limit or a bad value)."""
    try:
        params_limits_check(params_parse({"countdown": countdown}))
    except (LabInputError, LabLimitError) as exc:
        return str(exc)
    raise AssertionError(f"countdown {countdown!r} was accepted")


def _from_lab_form(countdown: str) -> str:
    client = Client()
    session = client.session
    session[SESSION_KEY] = Learner.objects.create().key
    session.save()
    response = client.post("/lab/", {"lane": "redis-short", "countdown": countdown, "count": "1"})
    assert response.status_code == 400
    return html.unescape(response.content.decode())


def _from_cli(countdown: str) -> str:
    with pytest.raises(CommandError) as refused:
        call_command("lab", "run", "--countdown", countdown, "--learner", "test-params-cli")
    return str(refused.value)


def _from_workshop(countdown: str) -> str:
    instructor = get_user_model().objects.create_user("params-teacher", is_staff=True)
    room = rooms.room_create(instructor=instructor, title="Limits")
    client = Client()
    client.force_login(instructor)
    response = client.post(
        reverse("workshop:run", args=[room.code]),
        {"lane": "redis-short", "count": "1", "countdown": countdown, "metric": "receipts"},
        headers={"HX-Request": "true"},
    )
    room.refresh_from_db()
    assert room.shared_run is None  # refused before anything was opened
    return html.unescape(response.content.decode())


@pytest.mark.parametrize(
    ("countdown", "words"),
    [
        ("61", "the lab allows at most 1 min"),  # past LAB_MAX_COUNTDOWN
        ("-5", "countdown cannot be less than 0; you gave -5."),
        ("soon", "countdown must be a number; 'soon' is not one."),
    ],
)
def test_a_bad_countdown_gets_the_same_message_from_the_form_the_cli_and_the_workshop(
    settings, countdown, words
):
    settings.LAB_MAX_COUNTDOWN = 60
    message = _message(countdown)
    assert words in message
    assert message in _from_lab_form(countdown)
    assert _from_cli(countdown) == message
    assert message in _from_workshop(countdown)
    assert not Run.objects.exists()


def test_the_lab_form_draws_the_schemas_limits_as_input_bounds(settings):
    settings.LAB_MAX_COUNTDOWN = 90
    page = Client().get("/lab/").content.decode()
    assert 'name="countdown"' in page and 'max="90"' in page
    assert f'max="{PARAMS["duration"].high:g}"' in page


def test_a_workshop_room_keeps_only_the_parameters_it_was_given_and_fires_them_as_parsed():
    from teachlab.workshop.predictions import clean_params

    assert clean_params({"count": "3", "countdown": "12.5", "spacing": "", "guard": True}) == {
        "count": 3,
        "countdown": 12.5,
        "guard": True,
    }
    assert clean_params({"count": 2, "countdown": 0, "acks_late": False}) == {
        "count": 2,
        "countdown": 0.0,
    }


def test_an_experiment_file_gets_the_schemas_words_for_a_bad_parameter():
    from tests.lab.test_experiments_catalog import GOOD, validate

    _, problems = validate(GOOD.replace("params: {countdown: 25}", "params: {countdown: -3}"))
    assert [p.message for p in problems] == [_message("-3")]


def test_every_schema_default_parses_to_itself():
    assert params_parse({}) == RunParams()
    assert set(PARAMS) == set(RunParams.__dataclass_fields__)

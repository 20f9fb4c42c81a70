"""Session plans: steps checked with messages naming the step, owner-only pages, one-file
export and import, a room started from a plan, and Next/Previous applying its steps."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from teachlab.workshop import planformat, planrun, plans
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import Plan, Room
from tests.workshop.conftest import make_user

pytestmark = pytest.mark.django_db


def _driver(user, *, csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


@pytest.fixture
def steps(question):
    """One step of every kind, on a question of the shipped lessons."""
    return [
        {"kind": "answers", "question": question.slug, "seconds": 60},
        {"kind": "tier", "question": question.slug, "tier": "basics"},
        {"kind": "claim", "claim": question.claims[0].key},
        {
            "kind": "run",
            "lane": "redis-short",
            "params": {"count": 3, "countdown": 5},
            "metric": "receipts",
            "prompt": "How many receipts?",
        },
        {"kind": "leaderboard"},
    ]


@pytest.fixture
def plan(instructor, steps):
    return plans.plan_create(owner=instructor, title="Tuesday group", steps=steps)


def _message(raw_steps) -> str:
    with pytest.raises(WorkshopError) as caught:
        planformat.steps_clean(raw_steps)
    return caught.value.message


# --- steps, checked ---


def test_steps_of_every_kind_are_kept_as_the_instructor_gave_them(steps):
    cleaned = planformat.steps_clean(steps)
    assert [s["kind"] for s in cleaned] == ["answers", "tier", "claim", "run", "leaderboard"]
    assert cleaned[3]["params"] == {"count": 3, "countdown": 5.0}
    assert cleaned[0]["seconds"] == 60


def test_a_claim_that_is_not_in_the_lessons_is_refused_naming_its_step_and_field(steps):
    steps[2]["claim"] = "no-such-question:made-up"
    message = _message(steps)
    assert message.startswith("Step 3 (claim vote), claim:")
    assert "“no-such-question:made-up” is not a claim in the lessons" in message


def test_an_unknown_question_kind_tier_or_field_each_get_their_own_message(steps, question):
    assert _message([{"kind": "tier", "question": "nope", "tier": "basics"}]).startswith(
        "Step 1 (show a tier), question: “nope” is not a question"
    )
    assert "pick one of prompt, basics, solid, senior" in _message(
        [{"kind": "tier", "question": question.slug, "tier": "expert"}]
    )
    assert "Step 1, kind: “poll” is not one of tier, claim" in _message([{"kind": "poll"}])
    assert _message([{"kind": "leaderboard", "colour": "red"}]) == (
        "Step 1 (leaderboard), colour: is not a field of this kind of step."
    )
    assert _message(["tier"]) == "Step 1: must be an object with a “kind”."


def test_a_run_step_beyond_the_labs_limits_is_refused_in_the_labs_words(steps):
    steps[3]["params"] = {"count": 100000}
    message = _message(steps)
    assert message.startswith("Step 4 (prediction and shared run), params: A run may have at most")
    steps[3]["params"], steps[3]["lane"] = {}, "kafka"
    assert "Step 4 (prediction and shared run), lane: “kafka” is not one of the lab's lanes" in (
        _message(steps)
    )


def test_an_answer_round_timer_outside_the_rooms_limits_is_refused(steps):
    steps[0]["seconds"] = 3
    assert _message(steps) == "Step 1 (answer round), seconds: A timer runs 5 to 600 seconds."


# --- pages: owner only, CSRF ---


def test_an_instructor_creates_a_plan_adds_reorders_and_removes_steps(instructor, question):
    client = _driver(instructor)
    response = client.post(reverse("workshop:plan_new"), {"title": "Morning"})
    plan = Plan.objects.get()
    assert response["Location"] == reverse("workshop:plan", args=[plan.pk])
    add = reverse("workshop:plan_step_add", args=[plan.pk])
    client.post(add, {"kind": "tier", "question": question.slug, "tier": "solid"})
    client.post(add, {"kind": "leaderboard"})
    client.post(
        add,
        {
            "kind": "run",
            "lane": "redis-short",
            "metric": "receipts",
            "count": "4",
            "acks_late": "on",
        },
    )
    plan.refresh_from_db()
    assert [s["kind"] for s in plan.steps] == ["tier", "leaderboard", "run"]
    assert plan.steps[2]["params"] == {"count": 4, "acks_late": True}
    client.post(reverse("workshop:plan_step_move", args=[plan.pk, 2]), {"to": "up"})
    client.post(reverse("workshop:plan_step_remove", args=[plan.pk, 0]))
    plan.refresh_from_db()
    assert [s["kind"] for s in plan.steps] == ["run", "leaderboard"]
    page = client.get(reverse("workshop:plan", args=[plan.pk])).content.decode()
    assert "Predict receipts (deliveries), then a shared run on redis-short" in page


def test_a_bad_step_from_the_edit_page_is_shown_in_the_step_list_not_stored(plan, instructor):
    client = _driver(instructor)
    before = list(plan.steps)
    response = client.post(
        reverse("workshop:plan_step_add", args=[plan.pk]),
        {"kind": "claim", "claim": "made:up"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert "Step 6 (claim vote), claim: “made:up” is not a claim in the lessons." in (
        response.content.decode()
    )
    plan.refresh_from_db()
    assert plan.steps == before


def test_only_the_owner_sees_or_changes_a_plan(plan):
    other = _driver(make_user("other-staff", staff=True))
    for name in ("workshop:plan", "workshop:plan_export"):
        assert other.get(reverse(name, args=[plan.pk])).status_code == 404
    for name in ("workshop:plan_delete", "workshop:plan_room", "workshop:plan_step_add"):
        assert other.post(reverse(name, args=[plan.pk]), {"kind": "leaderboard"}).status_code == 404
    listed = other.get(reverse("workshop:plans")).content.decode()
    assert reverse("workshop:plan", args=[plan.pk]) not in listed
    learner = _driver(make_user("learner", staff=False))
    assert learner.get(reverse("workshop:plans")).status_code == 403
    anonymous = Client().get(reverse("workshop:plan", args=[plan.pk]))
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert Plan.objects.filter(pk=plan.pk).exists() and len(plan.steps) == 5


def test_plan_posts_without_a_csrf_token_are_refused(plan, instructor):
    client = _driver(instructor, csrf=True)
    assert client.post(reverse("workshop:plan_new"), {"title": "x"}).status_code == 403
    assert client.post(reverse("workshop:plan_delete", args=[plan.pk])).status_code == 403
    assert client.post(reverse("workshop:plan_room", args=[plan.pk])).status_code == 403
    assert Plan.objects.count() == 1 and not Room.objects.exists()


def test_the_owner_deletes_a_plan(plan, instructor):
    response = _driver(instructor).post(reverse("workshop:plan_delete", args=[plan.pk]))
    assert response["Location"] == reverse("workshop:plans")
    assert not Plan.objects.exists()


# --- one file: export and import ---


def _import(client: Client, data: bytes):
    upload = SimpleUploadedFile("plan.json", data, content_type="application/json")
    return client.post(reverse("workshop:plan_import"), {"file": upload})


def test_an_exported_plan_imports_as_an_equal_plan(plan, instructor):
    client = _driver(instructor)
    exported = client.get(reverse("workshop:plan_export", args=[plan.pk]))
    assert exported["Content-Disposition"].startswith("attachment;")
    doc = json.loads(exported.content)
    assert doc["format"] == "teachlab-session-plan" and doc["version"] == 1
    colleague = make_user("colleague", staff=True)
    response = _import(_driver(colleague), exported.content)
    copy = Plan.objects.get(owner=colleague)
    assert response["Location"] == reverse("workshop:plan", args=[copy.pk])
    assert (copy.title, copy.steps) == (plan.title, plan.steps)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"{not json", "That file is not JSON"),
        (b'{"format": "slides", "version": 1}', "is not a session plan"),
        (
            b'{"format": "teachlab-session-plan", "version": 9, "title": "x", "steps": []}',
            "format version 9",
        ),
        (
            b'{"format": "teachlab-session-plan", "version": 1, "title": "x", "steps": {}}',
            "“steps” must be a list",
        ),
        (b"\xff\xfe", "That file is not JSON"),
    ],
)
def test_a_file_that_is_not_a_plan_gets_a_clear_message_not_an_error_page(
    instructor, data, expected
):
    response = _import(_driver(instructor), data)
    assert response.status_code == 400
    assert expected in response.content.decode()
    assert not Plan.objects.exists()


def test_an_imported_step_with_an_unknown_claim_is_refused_naming_the_step(plan, instructor):
    doc = json.loads(plans.plan_export(plan=plan))
    doc["steps"][1]["tier"] = "expert"
    doc["steps"][2]["claim"] = "gone:claim"
    response = _import(_driver(instructor), json.dumps(doc).encode())
    page = response.content.decode()
    assert response.status_code == 400
    assert "Not imported. Step 2 (show a tier), tier: pick one of" in page
    assert Plan.objects.count() == 1


def test_a_plan_file_over_the_size_cap_is_refused(instructor):
    response = _import(_driver(instructor), b" " * (planformat.MAX_FILE_BYTES + 1))
    assert response.status_code == 400
    assert "A plan file is at most 64 KiB." in response.content.decode()


# --- a room from a plan, stepped ---


def test_a_room_started_from_a_plan_shows_its_first_step_as_next(plan, instructor):
    response = _driver(instructor).post(reverse("workshop:plan_room", args=[plan.pk]))
    room = Room.objects.get()
    assert response["Location"] == reverse("workshop:present", args=[room.code])
    assert room.plan_steps == plan.steps and room.plan_at is None
    page = _driver(instructor).get(response["Location"]).content.decode()
    assert "Plan: Tuesday group" in page
    assert 'data-plan-step="next"' in page and "Next: Answer round (60 s)" in page
    # the free controls are all still there
    assert reverse("workshop:drive", args=[room.code]) in page


def test_a_free_room_has_no_plan_panel_and_refuses_next(room, instructor):
    client = _driver(instructor)
    page = client.get(reverse("workshop:present", args=[room.code])).content.decode()
    assert 'data-plan-step="next"' not in page
    response = client.post(reverse("workshop:plan_next", args=[room.code]), HTTP_HX_REQUEST="true")
    assert "This room runs free: it was not started from a plan." in response.content.decode()


def test_next_and_previous_apply_each_step_through_the_rooms_own_actions(
    plan, instructor, question
):
    room = planrun.room_from_plan(instructor=instructor, plan=plan)
    client = _driver(instructor)
    next_url = reverse("workshop:plan_next", args=[room.code])
    client.post(next_url)  # 1: answer round on the question's prompt
    room.refresh_from_db()
    assert (room.plan_at, room.question_slug, room.tier) == (0, question.slug, "prompt")
    assert room.answer_round is not None and room.answer_round.closes_at is not None
    # 2: a tier while the room still writes: refused as the console's tier button is
    response = client.post(next_url, HTTP_HX_REQUEST="true")
    assert "end the answer round first" in response.content.decode()
    room.refresh_from_db()
    assert room.plan_at == 0
    client.post(reverse("workshop:answers_end", args=[room.code]))  # a free action, as today
    client.post(next_url)
    room.refresh_from_db()
    assert (room.plan_at, room.tier) == (1, "basics")
    client.post(next_url)  # 3: the claim vote
    room.refresh_from_db()
    assert room.claim_round.claim_key == question.claims[0].key
    client.post(next_url)  # 4: the shared run, open for predictions
    room.refresh_from_db()
    assert room.shared_run.params == {"lane": "redis-short", "count": 3, "countdown": 5.0}
    assert room.shared_run.prompt == "How many receipts?" and not room.shared_run.run_id
    client.post(next_url)  # 5: the leaderboard
    room.refresh_from_db()
    assert room.leaderboard and room.plan_at == 4
    response = client.post(next_url, HTTP_HX_REQUEST="true")  # one past the last: the podium
    room.refresh_from_db()
    assert room.plan_at == 5 and 'data-moment="podium"' in response.content.decode()
    response = client.post(next_url, HTTP_HX_REQUEST="true")
    assert "That was the last step of the plan." in response.content.decode()
    client.post(reverse("workshop:plan_previous", args=[room.code]))  # back to the leaderboard
    client.post(reverse("workshop:plan_previous", args=[room.code]))  # back to the run
    room.refresh_from_db()
    assert room.plan_at == 3 and not room.leaderboard


def test_stepping_back_to_the_open_claim_keeps_its_votes(plan, instructor, question):
    plan.steps = [plan.steps[2], {"kind": "leaderboard"}]
    plan.save()
    room = planrun.room_from_plan(instructor=instructor, plan=plan)
    planrun.plan_next(room=room)
    first = Room.objects.get(pk=room.pk).claim_round
    room.refresh_from_db()
    planrun.plan_next(room=room)
    planrun.plan_previous(room=room)
    assert Room.objects.get(pk=room.pk).claim_round == first


def test_a_plan_whose_claim_left_the_lessons_starts_no_room(plan, instructor):
    Plan.objects.filter(pk=plan.pk).update(steps=[{"kind": "claim", "claim": "gone:claim"}])
    plan.refresh_from_db()
    response = _driver(instructor).post(reverse("workshop:plan_room", args=[plan.pk]))
    assert response.status_code == 400
    assert "Step 1 (claim vote), claim: “gone:claim” is not a claim" in response.content.decode()
    assert not Room.objects.exists()


def test_a_nul_in_a_title_or_step_text_is_refused_with_a_message_not_a_500(instructor):
    """PostgreSQL refuses NUL in text and JSON; the fuzz run found the 500 on plan_new."""
    client = _driver(instructor)
    response = client.post(reverse("workshop:plan_new"), {"title": "Morning\x00"})
    assert response.status_code == 400 and "NUL" in response.content.decode()
    assert not Plan.objects.exists()
    with pytest.raises(WorkshopError, match="NUL"):
        planformat.step_clean({"kind": "run", "lane": "redis-short", "prompt": "why\x00"}, 1)

"""The permission rules on their own, every case: who drives a workshop room, who creates one,
who gets the lab's worker controls, and what someone turned away is answered."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.test import RequestFactory

from teachlab.lab.worker.workers import controls_allowed
from teachlab.workshop import rooms
from teachlab.workshop.viewaccess import driver_refusal

pytestmark = pytest.mark.django_db


def _user(name: str, *, staff: bool = False, active: bool = True):
    return get_user_model().objects.create_user(
        username=name, password=None, is_staff=staff, is_active=active
    )


@pytest.fixture
def room():
    owner = _user("owner", staff=True)
    return rooms.room_create(instructor=owner, title="Perms")


def test_the_rooms_instructor_and_any_staff_drive_it_nobody_else(room):
    owner = room.instructor
    assert rooms.can_drive(user=owner, room=room) is True
    assert rooms.can_drive(user=_user("colleague", staff=True), room=room) is True
    assert rooms.can_drive(user=_user("learner"), room=room) is False
    assert rooms.can_drive(user=AnonymousUser(), room=room) is False
    assert rooms.can_drive(user=None, room=room) is False


def test_an_instructor_who_lost_staff_still_drives_their_own_room_but_not_when_inactive(room):
    owner = room.instructor
    owner.is_staff = False
    owner.save()
    assert rooms.can_drive(user=owner, room=room) is True
    owner.is_active = False
    owner.save()
    assert rooms.can_drive(user=owner, room=room) is False
    assert rooms.can_drive(user=_user("retired", staff=True, active=False), room=room) is False


def test_only_active_staff_create_rooms():
    assert rooms.can_create_rooms(user=_user("staff", staff=True)) is True
    assert rooms.can_create_rooms(user=_user("learner")) is False
    assert rooms.can_create_rooms(user=_user("gone", staff=True, active=False)) is False
    assert rooms.can_create_rooms(user=AnonymousUser()) is False
    assert rooms.can_create_rooms(user=None) is False


def test_worker_controls_are_everyones_on_a_local_run_and_only_staffs_otherwise(settings):
    staff, learner = _user("staff", staff=True), _user("learner")
    settings.LAB_LOCAL_CONTROLS = True
    assert controls_allowed(None) is True
    assert controls_allowed(AnonymousUser()) is True
    assert controls_allowed(learner) is True
    settings.LAB_LOCAL_CONTROLS = False
    assert controls_allowed(staff) is True
    assert controls_allowed(learner) is False
    assert controls_allowed(AnonymousUser()) is False
    assert controls_allowed(None) is False
    assert controls_allowed() is False
    assert controls_allowed(object()) is False  # not a user at all: no is_staff, no controls


def _request(user, path="/workshop/r/ABC/drive/?x=1"):
    request = RequestFactory().post(path)
    request.user = user
    return request


def test_someone_signed_out_is_sent_to_sign_in_and_back(room):
    refusal = driver_refusal(_request(AnonymousUser()), room)
    assert refusal.status_code == 302
    assert refusal["Location"] == "/accounts/login/?next=/workshop/r/ABC/drive/%3Fx%3D1"


def test_a_signed_in_non_instructor_is_refused_with_403_and_why(room):
    refusal = driver_refusal(_request(_user("learner")), room)
    assert refusal.status_code == 403
    assert refusal.content == b"Only the room's instructor can do that."


def test_the_instructor_and_staff_get_through(room):
    assert driver_refusal(_request(room.instructor), room) is None
    assert driver_refusal(_request(_user("colleague", staff=True)), room) is None

"""The fuzz tests read the database's rows again only after a statement that may write
(`world.WriteWatch`): these pin that the shortcut never hides a change, whichever way it is made
(the ORM, raw SQL, another thread's connection) and that a read alone re-reads nothing."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from lessons.models import Learner
from teachlab.workshop.models import Room
from tests.fuzz.world import WriteWatch, state, state_changes, world_build
from tests.lessons.quiz_support import QUIZ_FIXTURES

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def world(settings):
    settings.LESSONS_DIR = QUIZ_FIXTURES
    return world_build()


def test_a_row_added_through_the_orm_shows_as_a_change(world):
    before = state()
    Learner.objects.create()
    assert any("lessons_learner" in c for c in state_changes(before, state()))


def test_a_column_changed_by_raw_sql_shows_as_a_change(world):
    before = state()
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE workshop_room SET joins_locked = NOT joins_locked WHERE id = %s",
            [world.ids["room_pk"]],
        )
    assert any(c.startswith("row new: ('workshop_room'") for c in state_changes(before, state()))


def test_a_row_added_from_another_thread_shows_as_a_change(world):
    before = state()

    def add():
        try:
            Learner.objects.create()
        finally:
            connections.close_all()

    worker = threading.Thread(target=add)
    worker.start()
    worker.join()
    assert any("lessons_learner" in c for c in state_changes(before, state()))


def test_reads_alone_do_not_count_as_writes(world):
    state()
    writes = WriteWatch.writes
    assert Room.objects.filter(pk=world.ids["room_pk"]).exists()
    list(Learner.objects.all()[:5])
    state()
    assert WriteWatch.writes == writes

"""A workshop room's shared run is held to the lab's protections of the workers (what one
run may cost, what a lane holds at once), though not to the instructor's own budgets."""

from __future__ import annotations

import pytest

from teachlab.lab.models import Run
from teachlab.workshop import predictions
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import SharedRun

pytestmark = pytest.mark.django_db


def test_a_shared_run_over_the_per_run_cost_is_refused_and_predictions_open_again(room, instructor):
    shared = predictions.shared_run_open(
        room=room, lane="redis-short", params={"count": 2000, "countdown": 10800}
    )
    with pytest.raises(WorkshopError, match="one run may make at most 10,000 deliveries"):
        predictions.shared_run_fire(room=room, instructor=instructor)
    assert SharedRun.objects.get(pk=shared.pk).fired_at is None
    assert not Run.objects.exists()

"""Scenes for tests/workshop/test_results.py, run in a subprocess against the session's live
database (the one the lab monitor and the live server use):

    manage.py shell -c "from tests.workshop.unwatched import unwatched_run; unwatched_run()"

Each prints one JSON line for the test to read.
"""

from __future__ import annotations

import json
import time


def _room(title: str):
    from django.contrib.auth import get_user_model

    from teachlab.workshop import rooms

    user, _ = get_user_model().objects.get_or_create(username=f"teacher-{time.time_ns()}")
    user.is_staff = True
    user.save()
    return user, rooms.room_create(instructor=user, title=title)


def unwatched_run() -> None:
    """A room predicts and fires a 2-task run, and no screen of it is connected: the lab
    monitor's settle must store the outcome. Waits up to 60 s for it."""
    from teachlab.workshop import predictions, rooms, scores
    from teachlab.workshop.models import SharedRun

    user, room = _room("Nobody watching")
    seats = [rooms.seat_join(room=room, nickname=n) for n in ("Ana", "Bo")]
    shared = predictions.shared_run_open(
        room=room, lane="redis-short", params={"count": 2, "countdown": 0}, metric="receipts"
    )
    for seat, value in zip(seats, (2, 5), strict=True):
        predictions.prediction_make(seat=seat, shared_run_id=shared.pk, value=value)
    room.refresh_from_db()
    predictions.shared_run_fire(room=room, instructor=user)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        stored = SharedRun.objects.get(pk=shared.pk)
        if stored.observed is not None:
            break
        time.sleep(0.3)
    ranking = scores.run_ranking(stored)
    print(
        json.dumps(
            {
                "observed": stored.observed,
                "settled_at": stored.settled_at.isoformat() if stored.settled_at else None,
                "ranking": [[r.nickname, r.place, r.off] for r in ranking],
            }
        )
    )


def phone_outcome() -> None:
    """A settled run with 40 guesses (names as long as allowed), for the phone layout check:
    prints the room code and the 25th seat's cookie."""
    from django.utils import timezone

    from teachlab.workshop import names, predictions
    from teachlab.workshop.models import Prediction, Seat, SharedRun

    _, room = _room("Phone check")
    made = []
    for n in range(1, 41):
        nickname = f"Participant{n:03d}wwwwwwwwww"  # 24 characters, nowhere to break a line
        typed, folded = names.skeletons(nickname)
        made.append(
            Seat(room=room, nickname=nickname, nickname_key=names.nickname_key(nickname),
                 skeleton=typed, skeleton_folded=folded)
        )  # fmt: skip
    Seat.objects.bulk_create(made)
    seats = list(Seat.objects.filter(room=room).order_by("nickname"))
    shared = predictions.shared_run_open(room=room, lane="redis-short", params={"count": 1})
    Prediction.objects.bulk_create(
        [Prediction(shared_run=shared, seat=s, value=10_000 + n) for n, s in enumerate(seats)]
    )
    SharedRun.objects.filter(pk=shared.pk).update(
        run_id="phone-check", fired_at=timezone.now(), observed=10_000, settled_at=timezone.now()
    )
    print(json.dumps({"code": room.code, "token": seats[24].token, "nickname": seats[24].nickname}))

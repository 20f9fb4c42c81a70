"""The workshop pages over HTTP: creating a room, joining, seats, presenter actions, results."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client
from django.urls import reverse

from teachlab.workshop import rooms, votes
from teachlab.workshop.models import ClaimRound, Room, Seat, Vote
from tests.workshop.conftest import make_user

pytestmark = pytest.mark.django_db


def _joined(room: Room, nickname: str) -> Client:
    client = Client()
    response = client.post(reverse("workshop:join"), {"code": room.code, "nickname": nickname})
    assert response.status_code == 302, response.content
    return client


def _driver(user) -> Client:
    client = Client(enforce_csrf_checks=False)
    client.force_login(user)
    return client


def test_staff_creates_a_room_and_sees_code_join_url_and_qr_code(instructor):
    client = _driver(instructor)
    response = client.post(reverse("workshop:create"), {"title": "Morning group"})
    room = Room.objects.get()
    assert response["Location"] == reverse("workshop:present", args=[room.code])
    page = client.get(response["Location"]).content.decode()
    assert room.code in page
    assert f"/workshop/join/?code={room.code}" in page
    assert '<svg role="img"' in page and "QR code to join" in page


def test_a_learner_without_staff_cannot_create_a_room():
    client = _driver(make_user("learner", staff=False))
    assert client.post(reverse("workshop:create"), {"title": "x"}).status_code == 403
    anonymous = Client().post(reverse("workshop:create"), {"title": "x"})
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert not Room.objects.exists()


def test_joining_with_code_and_nickname_gives_a_seat_that_survives_a_refresh(room):
    client = _joined(room, "Ana")
    first = client.get(reverse("workshop:room", args=[room.code]))
    assert first.status_code == 200 and "Ana" in first.content.decode()
    again = client.get(reverse("workshop:room", args=[room.code]))
    assert "Ana" in again.content.decode()
    # joining again from the same browser keeps the same seat instead of a second one
    client.post(reverse("workshop:join"), {"code": room.code.lower(), "nickname": "Other"})
    assert list(Seat.objects.values_list("nickname", flat=True)) == ["Ana"]


def test_the_code_is_forgiving_about_case_spaces_and_dashes(room):
    code = f" {room.code[:3].lower()}-{room.code[3:]} "
    _joined(room, "Ana")
    client = Client()
    response = client.post(reverse("workshop:join"), {"code": code, "nickname": "Bo"})
    assert response.status_code == 302


def test_a_nickname_taken_in_the_room_is_refused_whatever_its_case(room):
    _joined(room, "Ana")
    response = Client().post(reverse("workshop:join"), {"code": room.code, "nickname": " ANA "})
    assert response.status_code == 400
    assert "already called" in response.content.decode()
    assert Seat.objects.count() == 1


def test_a_full_room_refuses_one_more_seat_with_a_message(room, settings):
    settings.WORKSHOP_MAX_SEATS = 2
    _joined(room, "Ana")
    _joined(room, "Bo")
    response = Client().post(reverse("workshop:join"), {"code": room.code, "nickname": "Cy"})
    assert response.status_code == 400
    assert "This room is full (2 participants)" in response.content.decode()
    assert Seat.objects.filter(room=room).count() == 2


def test_a_removed_seat_frees_its_place_and_is_readmitted_only_into_a_free_one(room, settings):
    settings.WORKSHOP_MAX_SEATS = 2
    _joined(room, "Ana")
    _joined(room, "Bo")
    ana = Seat.objects.get(room=room, nickname="Ana")
    rooms.seat_kick(room=room, seat_id=ana.pk)
    _joined(room, "Cy")  # Ana's place, freed by the removal
    assert Seat.objects.filter(room=room).seated().count() == 2
    with pytest.raises(rooms.WorkshopError, match="This room is full"):
        rooms.seat_readmit(room=room, seat_id=ana.pk)
    assert Seat.objects.get(pk=ana.pk).kicked_at is not None


def test_a_nickname_that_looks_the_same_in_other_code_points_is_refused(room):
    _joined(room, "Jos\u00e9")  # é as one code point
    _joined(room, "ana")
    for lookalike in ("Jose\u0301", "\uff21na"):  # e + combining accent; fullwidth A
        response = Client().post(
            reverse("workshop:join"), {"code": room.code, "nickname": lookalike}
        )
        assert response.status_code == 400, lookalike
        assert "already called" in response.content.decode()
    assert Seat.objects.count() == 2


def test_a_wrong_code_or_empty_nickname_gets_a_clear_message(room):
    wrong = Client().post(reverse("workshop:join"), {"code": "ZZZZZZ", "nickname": "Ana"})
    assert "No workshop room has that code" in wrong.content.decode()
    empty = Client().post(reverse("workshop:join"), {"code": room.code, "nickname": "   "})
    assert empty.status_code == 400
    assert not Seat.objects.exists()


def test_a_participant_page_without_a_seat_sends_you_to_join(room):
    response = Client().get(reverse("workshop:room", args=[room.code]))
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('workshop:join')}?code={room.code}"


def test_a_hostile_nickname_is_escaped_on_every_screen_and_in_the_csv(room, instructor):
    nasty = "<img src=x onerror=1>"
    _joined(room, nasty)
    formula = "=HYPERLINK(1)"
    _joined(room, formula)
    driver = _driver(instructor)
    for url in (
        reverse("workshop:present", args=[room.code]),
        reverse("workshop:results", args=[room.code]),
    ):
        page = driver.get(url).content.decode()
        assert nasty not in page
        assert "&lt;img src=x onerror=1&gt;" in page
    export = driver.get(reverse("workshop:results_csv", args=[room.code, "participants"]))
    rows = list(csv.reader(io.StringIO(export.content.decode("utf-8-sig"))))
    assert ["'" + formula] in [r[:1] for r in rows]


def test_a_hostile_nickname_is_escaped_on_the_participants_own_page_and_the_join_form(room):
    nasty = "<svg onload=alert(1)>"
    seated = _joined(room, nasty)
    own = seated.get(reverse("workshop:room", args=[room.code])).content.decode()
    assert nasty not in own and "&lt;svg onload=alert(1)&gt;" in own
    again = Client().post(reverse("workshop:join"), {"code": room.code, "nickname": nasty})
    assert again.status_code == 400
    assert nasty not in again.content.decode() and "&lt;svg" in again.content.decode()
    longer = "<img src=x onerror=alert(1)>"  # past the length limit: refused, said why, escaped
    refused = Client().post(reverse("workshop:join"), {"code": room.code, "nickname": longer})
    assert refused.status_code == 400 and longer not in refused.content.decode()
    assert "at most 24 characters" in refused.content.decode()
    assert Seat.objects.count() == 1


def test_only_the_rooms_instructor_or_staff_can_present_drive_or_read_results(room, question):
    learner = _driver(make_user("learner", staff=False))
    participant = _joined(room, "Ana")
    for client in (learner, participant):
        for name in ("present", "results"):
            assert client.get(reverse(f"workshop:{name}", args=[room.code])).status_code in (
                302,
                403,
            )
        response = client.post(
            reverse("workshop:drive", args=[room.code]),
            {"question": question.slug, "tier": "senior"},
        )
        assert response.status_code in (302, 403)
        for action in ("claim", "reveal", "run", "fire", "outcome", "close"):
            response = client.post(reverse(f"workshop:{action}", args=[room.code]), {})
            assert response.status_code in (302, 403), action
    room.refresh_from_db()
    assert room.question_slug == "" and room.closed_at is None
    colleague = _driver(make_user("colleague", staff=True))
    assert colleague.get(reverse("workshop:present", args=[room.code])).status_code == 200


def test_presenter_actions_over_htmx_answer_with_the_changed_parts(room, instructor, question):
    driver = _driver(instructor)
    response = driver.post(
        reverse("workshop:drive", args=[room.code]),
        {"question": question.slug, "tier": "basics"},
        headers={"HX-Request": "true"},
    )
    body = response.content.decode()
    assert 'id="ws-stage"' in body and question.title in body
    bad = driver.post(
        reverse("workshop:drive", args=[room.code]),
        {"question": "no-such-question", "tier": "basics"},
        headers={"HX-Request": "true"},
    )
    assert bad.status_code == 200 and "not in the lessons" in bad.content.decode()
    room.refresh_from_db()
    assert (room.question_slug, room.tier) == (question.slug, "basics")


def test_results_keep_votes_per_participant_and_per_claim_after_closing(room, instructor, question):
    claim = question.claims[0]
    votes.claim_open(room=room, claim_key=claim.key)
    cr = ClaimRound.objects.get()
    right = Vote.HOLDS if claim.holds else Vote.COSTS
    wrong = Vote.COSTS if claim.holds else Vote.HOLDS
    ana = rooms.seat_join(room=room, nickname="Ana")
    bo = rooms.seat_join(room=room, nickname="Bo")
    votes.vote_cast(seat=ana, round_id=cr.pk, choice=right)
    votes.vote_cast(seat=bo, round_id=cr.pk, choice=wrong)
    room.refresh_from_db()
    votes.claim_reveal(room=room)
    rooms.room_close(room=room)
    driver = _driver(instructor)
    claims = driver.get(reverse("workshop:results_csv", args=[room.code, "claims"]))
    rows = list(csv.DictReader(io.StringIO(claims.content.decode("utf-8-sig"))))
    assert rows[0]["claim"] == claim.key and rows[0]["answered"] == "2"
    assert rows[0]["right_pct"] == "50"
    people = driver.get(reverse("workshop:results_csv", args=[room.code, "participants"]))
    by_name = {
        r["nickname"]: r for r in csv.DictReader(io.StringIO(people.content.decode("utf-8-sig")))
    }
    assert by_name["Ana"]["right"] == "1" and by_name["Bo"]["right"] == "0"
    refused = Client().post(reverse("workshop:join"), {"code": room.code, "nickname": "Late"})
    assert "has ended" in refused.content.decode()


def test_a_closed_room_accepts_no_presenter_action_and_says_why(room, instructor, question):
    rooms.room_close(room=room)
    driver = _driver(instructor)
    posts = {
        "drive": {"question": question.slug, "tier": "basics"},
        "claim": {"claim": question.claims[0].key},
        "reveal": {},
        "run": {"lane": "redis-short", "count": "1", "countdown": "5", "metric": "receipts"},
        "fire": {},
    }
    for action, data in posts.items():
        response = driver.post(
            reverse(f"workshop:{action}", args=[room.code]), data, headers={"HX-Request": "true"}
        )
        assert response.status_code == 200, action
        assert "has ended" in response.content.decode(), action
    room.refresh_from_db()
    assert room.question_slug == "" and room.claim_round is None and room.shared_run is None
    assert not ClaimRound.objects.exists()


def test_a_room_drawn_after_its_run_is_over_gives_the_amplification(room, instructor):
    # A page load or a socket that joins after the shared run settled draws the counters
    # from the lab's picture: the run is over, so amplification is a result, not "after the run".
    from django.utils import timezone

    from lessons.models import Learner
    from teachlab.lab.models import Run, RunEvent
    from teachlab.workshop import fragments
    from teachlab.workshop.models import SharedRun

    learner, _ = Learner.objects.get_or_create(user=instructor)
    run = Run.objects.create(
        learner=learner, lane="redis-short", params={"count": 1}, task_ids=["task-1"],
        label=f"room:{room.code}", status=Run.Status.RUNNING,
    )  # fmt: skip
    for seq, kind in enumerate(("received", "started", "finished"), 1):
        RunEvent.objects.create(
            run=run, seq=seq, kind=kind, task_id="task-1", index=0, copy=1, worker="w1",
            at=1000.0 + seq, t=float(seq),
        )  # fmt: skip
    shared = SharedRun.objects.create(
        room=room, title="one task", prompt="How many?", run_id=run.id, fired_at=timezone.now()
    )
    Room.objects.filter(pk=room.pk).update(shared_run=shared)

    def amplification() -> str:
        room.refresh_from_db()
        html = fragments.participant_html(room, ["live"], live=True)
        return html[html.index('data-counter="amplification"') :].split("</dd>")[0]

    assert "after the run" in amplification()  # while it runs
    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE)
    assert "1.00×" in amplification() and "after the run" not in amplification()

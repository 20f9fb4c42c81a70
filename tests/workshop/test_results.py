"""Results that survive: the outcome stored when the run settles with nobody watching, the
CSV exports (old URLs and the new per-person answers and scores), and the phone layout of
the outcome."""

from __future__ import annotations

import csv
import io
import json
import re
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from teachlab.workshop import predictions, results, rooms, rounds, votes
from teachlab.workshop.models import ClaimRound, Prediction, SharedRun, Vote
from tests.stack import manage


@pytest.fixture
def instructor(db):
    """Staff without a password: nothing to hash (PBKDF2 costs a second a user here)."""
    return get_user_model().objects.create_user("instructor", is_staff=True)


def _csv(client: Client, room, kind: str) -> list[dict]:
    response = client.get(reverse("workshop:results_csv", args=[room.code, kind]))
    assert response.status_code == 200, kind
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response.content.startswith(b"\xef\xbb\xbf"), kind  # Excel reads UTF-8 by it
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))


def _local(moment) -> str:
    return moment.astimezone(ZoneInfo("Europe/Berlin")).strftime("%Y-%m-%d %H:%M:%S")


@pytest.mark.django_db
def test_the_csv_holds_each_persons_vote_and_guess_and_a_summary_per_claim(
    room, instructor, question, settings
):
    settings.WORKSHOP_TIME_ZONE = "Europe/Berlin"
    claim = question.claims[0]
    right, wrong = (Vote.HOLDS, Vote.COSTS) if claim.holds else (Vote.COSTS, Vote.HOLDS)
    votes.claim_open(room=room, claim_key=claim.key)
    cr = ClaimRound.objects.get()
    ana = rooms.seat_join(room=room, nickname="Ana")
    formula = rooms.seat_join(room=room, nickname="=cmd|calc")
    rooms.seat_join(room=room, nickname="Silent")
    votes.vote_cast(seat=ana, round_id=cr.pk, choice=right)
    votes.vote_cast(seat=formula, round_id=cr.pk, choice=wrong)
    room.refresh_from_db()
    votes.claim_reveal(room=room)
    shared = predictions.shared_run_open(room=room, lane="redis-short", params={"count": 1})
    predictions.prediction_make(seat=ana, shared_run_id=shared.pk, value=3)
    predictions.prediction_make(seat=formula, shared_run_id=shared.pk, value=9)
    SharedRun.objects.filter(pk=shared.pk).update(run_id="r1", fired_at=timezone.now())
    predictions.shared_run_finish(
        shared=SharedRun.objects.get(pk=shared.pk), summary={"receipts": 3}
    )
    rooms.room_close(room=room)
    driver = Client()
    driver.force_login(instructor)

    answers = _csv(driver, room, "answers")
    assert len(answers) == 3 * 2  # every participant, every item
    by = {(r["nickname"], r["kind"]): r for r in answers}
    assert by[("Ana", "claim")]["correct"] == "yes" and by[("Ana", "claim")]["score"] == "1"
    assert by[("'=cmd|calc", "claim")]["correct"] == "no"  # the nickname kept from formulas
    assert by[("Silent", "claim")]["answer"] == "" and by[("Silent", "claim")]["correct"] == ""
    assert by[("Ana", "run")]["answer"] == "3" and by[("Ana", "run")]["off_by"] == "0"
    assert by[("Ana", "run")]["correct"] == "yes" and by[("Ana", "run")]["right_answer"] == "3"
    assert by[("'=cmd|calc", "run")]["answer"] == "9"
    assert (
        by[("'=cmd|calc", "run")]["off_by"] == "6" and by[("'=cmd|calc", "run")]["score"] == "0.0"
    )
    answered = "answered_at (Europe/Berlin)"
    assert by[("Ana", "claim")][answered] == _local(Vote.objects.get(seat=ana).cast_at)
    assert by[("Ana", "run")][answered] == _local(Prediction.objects.get(seat=ana).made_at)

    (claim_row,) = _csv(driver, room, "claims")
    assert (claim_row["answered"], claim_row["right"], claim_row["unanswered"]) == ("2", "1", "0")
    assert claim_row["present"] == "2"  # Silent joined and never took part: not present
    assert claim_row["right_pct"] == "50"
    (run_row,) = _csv(driver, room, "runs")
    assert run_row["predicted"] == "3 9" and run_row["predictions"] == "2"  # values, and count
    assert run_row["observed"] == "3" and run_row["settled_at (Europe/Berlin)"]
    standings = _csv(driver, room, "scores")
    assert [(r["place"], r["nickname"], r["score"]) for r in standings][0] == ("1", "Ana", "2.0")
    assert len(_csv(driver, room, "participants")) == 3
    page = driver.get(reverse("workshop:results", args=[room.code])).content.decode()
    assert '<td class="values">3 9</td>' in page
    assert driver.get(reverse("workshop:results_csv", args=[room.code, "nope"])).status_code == 404
    seated = Client()
    seated.cookies[rooms.seat_cookie_name(room.code)] = ana.token
    assert (
        seated.get(reverse("workshop:results_csv", args=[room.code, "answers"])).status_code == 302
    )


@pytest.mark.django_db
def test_a_removed_seats_vote_does_not_stand_in_for_a_seated_one_in_the_claim_summary(
    room, instructor, question
):
    votes.claim_open(room=room, claim_key=question.claims[0].key)
    cr = ClaimRound.objects.get()
    gone = rooms.seat_join(room=room, nickname="Gone")
    quiet = rooms.seat_join(room=room, nickname="Quiet")
    rooms.seat_join(room=room, nickname="Idle")  # joined and never did anything
    votes.vote_cast(seat=gone, round_id=cr.pk, choice=Vote.HOLDS)
    rooms.seat_kick(room=room, seat_id=gone.pk)
    shared = predictions.shared_run_open(room=room, lane="redis-short", params={"count": 1})
    predictions.prediction_make(seat=quiet, shared_run_id=shared.pk, value=3)
    driver = Client()
    driver.force_login(instructor)
    (claim_row,) = _csv(driver, room, "claims")
    # Her vote stays counted; Quiet, present (took part) and still seated, never answered;
    # Idle is an abandoned seat, counted nowhere.
    assert (claim_row["answered"], claim_row["present"], claim_row["unanswered"]) == (
        "1",
        "1",
        "1",
    )
    (run_row,) = _csv(driver, room, "runs")
    assert (run_row["present"], run_row["predictions"], run_row["unanswered"]) == ("1", "1", "0")


@pytest.mark.django_db
def test_every_export_starts_with_a_bom_writes_local_times_one_way_and_holds_typed_answers(
    room, instructor, question, settings
):
    """Issue 28: typed answers were in no export, CSVs had no BOM (Excel showed "JosÃ©")
    and mixed "2026-12-05T10:03:07.123+00:00" with "2026-12-05 10:03:07+00:00"."""
    settings.WORKSHOP_TIME_ZONE = "America/New_York"
    votes.claim_open(room=room, claim_key=question.claims[0].key)
    cr = ClaimRound.objects.get()
    jose, bo = (rooms.seat_join(room=room, nickname=n) for n in ("José", "Bo"))
    votes.vote_cast(seat=jose, round_id=cr.pk, choice=Vote.HOLDS)
    room.refresh_from_db()
    votes.claim_reveal(room=room)
    rooms.room_drive(room=room, question_slug=question.slug, tier="prompt")
    room.refresh_from_db()
    rooms_round = rounds.answer_round_open(room=room)
    written = rounds.answer_submit(seat=bo, round_id=rooms_round.pk, text="Ack late, then retry")
    room.refresh_from_db()
    rounds.answer_round_end(room=room)
    rounds.answer_show(room=room, answer_id=written.pk, shown=True)
    driver = Client()
    driver.force_login(instructor)
    stamp = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
    for kind in results.EXPORTS:
        rows = _csv(driver, room, kind)
        for row in rows:
            for column, value in row.items():
                if column.endswith("_at (America/New_York)") and value:
                    assert stamp.fullmatch(value), (kind, column, value)
                assert not column.endswith("_at"), (kind, column)  # every time names its zone
    people = {r["nickname"]: r for r in _csv(driver, room, "participants")}
    new_york = ZoneInfo("America/New_York")
    assert people["José"]["joined_at (America/New_York)"] == jose.joined_at.astimezone(
        new_york
    ).strftime("%Y-%m-%d %H:%M:%S")
    typed = [r for r in _csv(driver, room, "answers") if r["kind"] == "answer"]
    assert {r["nickname"]: (r["answer"], r["on_screen"]) for r in typed} == {
        "José": ("", ""),
        "Bo": ("Ack late, then retry", "yes"),
    }
    assert typed[0]["question"] == question.title


@pytest.mark.broker
@pytest.mark.slow
def test_the_outcome_is_stored_when_the_run_settles_with_no_screen_connected(room_lab):
    """Real redis-short workers and the lab monitor; no socket of the room ever connects."""
    done = manage(
        "shell", "-c", "from tests.workshop.unwatched import unwatched_run; unwatched_run()",
        timeout=120,
    )  # fmt: skip
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["observed"] == 2, done.stderr[-2000:]
    assert result["settled_at"]
    assert result["ranking"] == [["Ana", 1, 0], ["Bo", 2, 3]]


@pytest.mark.browser
def test_the_outcome_fits_a_phone_and_marks_the_participants_row(browser, live_server_url):
    done = manage(
        "shell", "-c", "from tests.workshop.unwatched import phone_outcome; phone_outcome()"
    )
    scene = json.loads(done.stdout.strip().splitlines()[-1])
    context = browser.new_context(viewport={"width": 390, "height": 844})
    host = live_server_url.split("//", 1)[1].split(":")[0]
    context.add_cookies(
        [{"name": rooms.seat_cookie_name(scene["code"]), "value": scene["token"],
          "domain": host, "path": "/"}]
    )  # fmt: skip
    page = context.new_page()
    page.goto(f"{live_server_url}/workshop/r/{scene['code']}/")
    mine = page.locator("#ws-ranking tr.mine")
    assert mine.count() == 1
    assert scene["nickname"] in mine.inner_text()
    assert "25th" in page.locator("#ws-myresult").inner_text()
    sizes = page.evaluate(
        "() => { const t = document.querySelector('#ws-ranking table');"
        " return [document.documentElement.scrollWidth, window.innerWidth,"
        " t.scrollWidth, t.clientWidth, t.getBoundingClientRect().right]; }"
    )
    page_width, viewport, table_scroll, table_client, table_right = sizes
    assert page_width <= viewport, sizes  # no sideways scrolling of the page
    assert table_scroll <= table_client and table_right <= viewport, sizes  # nothing clipped
    context.close()

"""The projector view and the console's round controls over HTTP: who may open and steer
them, what the room sees (no answers before the reveal, no controls), the spread switch and
the answer round."""

from __future__ import annotations

import datetime
import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from teachlab.workshop import predictions, rooms, rounds, screens, votes
from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import Answer, AnswerRound, ClaimRound, SharedRun
from tests.workshop.conftest import make_user

pytestmark = pytest.mark.django_db

ANSWER_WORDS = ("Holds up", "holds up", "Costs you the question", "costs you the question")
ROUND_ACTIONS = ("timer", "spread", "answers_open", "answers_end", "answer_show")


def _driver(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _joined(room, nickname: str) -> Client:
    client = Client()
    response = client.post(reverse("workshop:join"), {"code": room.code, "nickname": nickname})
    assert response.status_code == 302, response.content
    return client


def _screen(client: Client, room, **kw) -> str:
    response = client.get(reverse("workshop:screen", args=[room.code]), **kw)
    assert response.status_code == 200
    return response.content.decode()


def _htmx_post(client: Client, room, name: str, data: dict) -> str:
    response = client.post(
        reverse(f"workshop:{name}", args=[room.code]), data, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200, name
    return response.content.decode()


def test_only_the_rooms_instructor_or_staff_open_the_projector_or_steer_the_rounds(room):
    url = reverse("workshop:screen", args=[room.code])
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    learner = _driver(make_user("learner", staff=False))
    participant = _joined(room, "Ana")
    assert learner.get(url).status_code == 403
    assert participant.get(url).status_code == 302  # a seat is no sign-in
    for client in (learner, participant, Client()):
        for name in ROUND_ACTIONS:
            data = {"seconds": "30", "show": "1", "answer": "1"}
            response = client.post(reverse(f"workshop:{name}", args=[room.code]), data)
            assert response.status_code in (302, 403), name
    assert not AnswerRound.objects.exists()
    colleague = _driver(make_user("colleague", staff=True))
    assert colleague.get(url).status_code == 200


def test_the_console_links_to_the_projector_view(room, instructor):
    page = _driver(instructor).get(reverse("workshop:present", args=[room.code])).content
    assert reverse("workshop:screen", args=[room.code]).encode() in page
    assert b"Instructor console" in page


def test_the_projector_shows_join_code_qr_and_url_and_has_no_controls(room, instructor):
    page = _screen(_driver(instructor), room)
    assert f'<p class="code" aria-label="Join code">{room.code}</p>' in page
    assert f"/workshop/join/?code={room.code}" in page  # in the QR code's title
    assert '<svg role="img"' in page
    assert f'ws-connect="/ws/workshop/{room.code}/screen/"' in page
    for control in ("<form", "<button", "ws-send", "hx-post", "<input", "<textarea"):
        assert control not in page, control


def test_the_qr_code_has_a_viewbox_and_no_fixed_size_so_css_sizes_it(room, instructor):
    page = _screen(_driver(instructor), room)
    svg = re.search(r"<svg [^>]*>", page).group(0)
    assert re.search(r'viewBox="0 0 (\d+) \1"', svg), svg
    assert not re.search(r"\s(width|height)=", svg), svg


def test_the_projector_shows_the_claim_but_not_its_answer_until_the_reveal(
    room, instructor, question
):
    rooms.room_drive(room=room, question_slug=question.slug, tier="prompt")
    claim = question.claims[0]
    other = question.claims[1]
    votes.claim_open(room=room, claim_key=claim.key)
    seat = rooms.seat_join(room=room, nickname="Ana")
    votes.vote_cast(seat=seat, round_id=ClaimRound.objects.get().pk, choice="holds")
    driver = _driver(instructor)
    page = _screen(driver, room)
    assert question.title in page
    assert 'data-state="open"' in page and "Vote on your phone" in page
    assert re.search(r"answered <strong[^>]*>\d+</strong>", page)
    for words in ANSWER_WORDS:
        assert words not in page, words
    listed = escape(other.text)[:40]
    assert listed not in page  # the list of claims and their answers stays on the console
    console = driver.get(reverse("workshop:present", args=[room.code])).content.decode()
    assert listed in console and 'class="tag' in console

    room.refresh_from_db()
    votes.claim_reveal(room=room)
    revealed = _screen(driver, room)
    assert "The answer:" in revealed and "Holds up: 1 (100%)" in revealed


def test_the_projector_warns_about_a_loopback_join_url_and_takes_the_public_url(
    room, instructor, settings
):
    driver = _driver(instructor)
    settings.WORKSHOP_PUBLIC_URL = ""
    local = _screen(driver, room, headers={"host": "127.0.0.1:8000"})
    assert "Participants cannot use this address" in local
    assert "http://127.0.0.1:8000/workshop/join/" in local
    settings.WORKSHOP_PUBLIC_URL = "http://192.168.1.20:8000"
    public = _screen(driver, room, headers={"host": "127.0.0.1:8000"})
    assert "Participants cannot use this address" not in public
    assert f"http://192.168.1.20:8000/workshop/join/?code={room.code}" in public


def test_the_spread_is_hidden_on_the_projector_until_the_instructor_shows_it(room, instructor):
    shared = predictions.shared_run_open(
        room=room, lane="redis-short", params={"count": "1", "countdown": "5"}
    )
    for name, value in (("Ana", 3), ("Bo", 9), ("Cy", 6)):
        seat = rooms.seat_join(room=room, nickname=name)
        predictions.prediction_make(seat=seat, shared_run_id=shared.pk, value=value)
    driver = _driver(instructor)
    hidden = _screen(driver, room)
    assert "3</strong> predictions in" in hidden and "spread-bars" not in hidden
    console = driver.get(reverse("workshop:present", args=[room.code])).content.decode()
    assert "from 3 to 9, median 6" in console  # the instructor always sees it
    assert "Show the spread on the projector" in console

    answer = _htmx_post(driver, room, "spread", {"show": "1"})
    assert "Hide the spread from the projector" in answer
    assert SharedRun.objects.get().spread_shown
    shown = _screen(driver, room)
    assert "from 3 to 9, median 6" in shown and "spread-bars" in shown

    _htmx_post(driver, room, "spread", {"show": "0"})
    assert "spread-bars" not in _screen(driver, room)
    bad = _htmx_post(driver, room, "spread", {"show": "maybe"})
    assert "Select a valid choice" in bad
    assert not SharedRun.objects.get().spread_shown


def test_the_vote_timer_takes_5_to_600_seconds_and_needs_an_open_claim(room, instructor, question):
    driver = _driver(instructor)
    assert "No claim is open" in _htmx_post(driver, room, "timer", {"seconds": "30"})
    votes.claim_open(room=room, claim_key=question.claims[0].key)
    for seconds in ("3", "601", "soon"):
        answer = _htmx_post(driver, room, "timer", {"seconds": seconds})
        assert "Timer (seconds)" in answer, seconds
    assert ClaimRound.objects.get().closes_at is None
    answer = _htmx_post(driver, room, "timer", {"seconds": "30"})
    assert 'data-remaining="' in answer and "Votes close in" in answer
    closes = ClaimRound.objects.get().closes_at
    assert 29 <= (closes - timezone.now()).total_seconds() <= 30


def test_an_answer_round_holds_back_the_tiers_and_shows_chosen_answers_without_names(
    room, instructor, question
):
    driver = _driver(instructor)
    assert "Show a question first" in _htmx_post(driver, room, "answers_open", {"seconds": ""})
    rooms.room_drive(room=room, question_slug=question.slug, tier="solid")
    _htmx_post(driver, room, "answers_open", {"seconds": "60"})
    room.refresh_from_db()
    assert room.tier == "prompt" and room.answer_round.closes_at is not None
    # The tiers wait: not on the stage, and not by browsing either.
    refused = _htmx_post(driver, room, "drive", {"question": question.slug, "tier": "basics"})
    assert "end the answer round first" in refused
    participant = _joined(room, "Ana")
    browse = participant.get(
        reverse("workshop:browse", args=[room.code]), {"q": question.slug, "tier": "senior"}
    ).content.decode()
    assert 'class="tier-answer"' not in browse

    nasty = "<script>alert(1)</script> retry\nwith backoff"
    answers = []
    for n, text in enumerate([nasty, "idempotent handler", "acks_late", "two", "three", "four"]):
        seat = rooms.seat_join(room=room, nickname=f"Seat{n}")
        answers.append(rounds.answer_submit(seat=seat, round_id=room.answer_round_id, text=text))
    ids = list(Answer.objects.order_by("pk").values_list("pk", flat=True))
    early = _htmx_post(driver, room, "answer_show", {"answer": ids[0], "show": "1"})
    assert "still coming in" in early

    ended = _htmx_post(driver, room, "answers_end", {})
    assert "Show on the projector" in ended and "Seat0" not in ended
    room.refresh_from_db()
    assert room.tier == "basics"
    for pk in ids[:6]:
        _htmx_post(driver, room, "answer_show", {"answer": pk, "show": "1"})
    late = rooms.seat_join(room=room, nickname="Late")
    with pytest.raises(WorkshopError, match="answers are closed"):
        rounds.answer_submit(seat=late, round_id=room.answer_round_id, text="late")
    seventh = Answer.objects.create(round=room.answer_round, seat=late, text="seventh")
    too_many = _htmx_post(driver, room, "answer_show", {"answer": seventh.pk, "show": "1"})
    assert "Up to 6 answers at once" in too_many
    page = _screen(driver, room)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; retry<br>with backoff" in page
    assert "<script>alert(1)" not in page
    assert "idempotent handler" in page and "seventh" not in page
    assert "Seat0" not in page and "Seat1" not in page  # anonymous
    _htmx_post(driver, room, "answer_show", {"answer": ids[1], "show": "0"})
    assert "idempotent handler" not in _screen(driver, room)


def test_an_answer_is_cleaned_and_held_to_its_limits():
    assert rounds.clean_answer("  a\u0000b \t c\n\n\n\nd\u202e ") == "ab c\n\nd"
    with pytest.raises(WorkshopError, match="Type your answer first"):
        rounds.clean_answer(" \u200b\u0007 ")
    with pytest.raises(WorkshopError, match="400 characters"):
        rounds.clean_answer("x" * 401)


def test_a_late_vote_or_answer_is_refused_once_the_deadline_passed(room, question):
    rooms.room_drive(room=room, question_slug=question.slug, tier="prompt")
    votes.claim_open(room=room, claim_key=question.claims[0].key)
    room.refresh_from_db()
    rounds.claim_timer_start(room=room, seconds=30)
    seat = rooms.seat_join(room=room, nickname="Ana")
    cr = ClaimRound.objects.get()
    votes.vote_cast(seat=seat, round_id=cr.pk, choice="holds")
    ar = rounds.answer_round_open(room=room, seconds=30)
    rounds.answer_submit(seat=seat, round_id=ar.pk, text="first")
    past = timezone.now() - datetime.timedelta(seconds=1)
    ClaimRound.objects.update(closes_at=past)
    AnswerRound.objects.update(closes_at=past)
    with pytest.raises(WorkshopError, match="Time is up: votes on this claim are closed"):
        votes.vote_cast(seat=seat, round_id=cr.pk, choice="costs")
    with pytest.raises(WorkshopError, match="Time is up: answers are closed"):
        rounds.answer_submit(seat=seat, round_id=ar.pk, text="second")
    assert cr.votes.get().choice == "holds"
    assert Answer.objects.get().text == "first"
    with pytest.raises(WorkshopError, match="Time is already up"):
        rounds.claim_timer_start(room=room, seconds=30)
    # Every screen drawn after the deadline says so, and a phone has no vote buttons.
    participant = Client()
    participant.cookies[rooms.seat_cookie_name(room.code)] = seat.token
    page = participant.get(reverse("workshop:room", args=[room.code])).content.decode()
    claim = page.split('id="ws-claim"')[1].split("</section>")[0]
    assert "Time is up: votes are closed" in claim and "vote-buttons" not in claim


def test_the_live_counts_send_the_projector_only_the_parts_it_has_on_screen(room, question):
    """Issue 28: after an answer round ended, every presence push sent the projector an
    answer count it no longer shows (htmx:oobErrorNoTarget); the console keeps its count."""
    rooms.room_drive(room=room, question_slug=question.slug, tier="prompt")
    room.refresh_from_db()
    rounds.answer_round_open(room=room)
    room.refresh_from_db()
    assert 'id="ws-answercount"' in screens.counts_html(room)["screen"]
    rounds.answer_round_end(room=room)
    room.refresh_from_db()
    counts = screens.counts_html(room)
    assert 'id="ws-answercount"' not in counts["screen"]
    assert 'id="ws-answercount"' in counts["presenter"]

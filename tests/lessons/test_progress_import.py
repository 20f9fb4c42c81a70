"""Progress covers lab runs and experiments, with an overall summary; the exported file comes
back through /progress/import/: checked whole (a clear 400 and nothing stored when anything is
wrong), merged without overwriting newer data, and a second import of it changes nothing."""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from lessons.models import ImportedActivity, Learner, QuizAnswer, ReviewItem, TierReveal
from lessons.pages import lab_experiment_titles
from lessons.progress_import import keys_for_order
from lessons.quiz import ordered_keys
from teachlab.lab.experiments.models import Attempt
from teachlab.lab.models import Kind, Run, RunEvent
from tests.lessons.quiz_support import ALPHA, QUIZ_FIXTURES, answer, client_learner, start_quiz

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quiz_lessons(settings):
    settings.LESSONS_DIR = QUIZ_FIXTURES


def lab_run(learner: Learner, *, label: str = "", copies: tuple[int, ...] = (3, 1)) -> Run:
    """A settled run whose task i was received copies[i] times and ran each time."""
    fired = time.time() - 120
    run = Run.objects.create(
        learner=learner,
        lane="redis-short",
        params={"count": len(copies), "countdown": 25},
        label=label,
        status=Run.Status.DONE,
        task_ids=[f"task-{i}" for i in range(len(copies))],
        fired_at=fired,
        settled_at=fired + 40,
    )
    seq = 0
    for index, n in enumerate(copies):
        for copy in range(1, n + 1):
            for kind in (Kind.RECEIVED, Kind.STARTED, Kind.FINISHED):
                seq += 1
                RunEvent.objects.create(
                    run=run, seq=seq, kind=kind, task_id=run.task_ids[index], index=index,
                    copy=copy, at=fired + seq, t=seq,
                )  # fmt: skip
    return run


def experiment_attempt(learner: Learner, *, passed: bool, matched: bool) -> Attempt:
    return Attempt.objects.create(
        learner=learner,
        slug="countdown-beyond-timeout",
        prediction={"kind": "number", "value": 3},
        status=Attempt.Status.DONE,
        result={"passed": passed, "prediction": {"matched": matched}},
        finished_at=timezone.now(),
    )


def some_progress(client: Client) -> Learner:
    """Tiers, a rating, a quiz with answers, review items, two lab runs and an experiment."""
    client.get(f"/q/{ALPHA}/solid/")
    client.post(f"/q/{ALPHA}/solid/rate/", {"rating": "partly"})
    attempt = start_quiz(client, ALPHA)
    answer(client, attempt, f"{ALPHA}:cost-1", "costs")
    answer(client, attempt, f"{ALPHA}:hold-1", "costs")
    learner = client_learner(client)
    lab_run(learner)
    lab_run(learner, copies=(1,))
    lab_run(learner, label="experiment:countdown-beyond-timeout:main")  # not a free lab run
    experiment_attempt(learner, passed=True, matched=False)
    return learner


def export(client: Client) -> dict:
    return json.loads(client.get("/progress/download/").content)


def upload(client: Client, data, name: str = "teachlab-progress.json"):
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return client.post(
        "/progress/import/", {"file": SimpleUploadedFile(name, raw, "application/json")}
    )


def rows(learner: Learner) -> dict[str, int]:
    return {
        "tiers": learner.tier_reveals.count(),
        "ratings": learner.self_ratings.count(),
        "attempts": learner.quiz_attempts.count(),
        "answers": QuizAnswer.objects.filter(attempt__learner=learner).count(),
        "review": learner.review_items.count(),
        "imported": learner.imported_activity.count(),
    }


def test_progress_page_sums_up_questions_quizzes_lab_runs_and_experiments(client):
    some_progress(client)
    html = client.get("/progress/").content.decode()
    overview = html[html.index('id="overview"') : html.index('id="progress-rows"')]

    assert "1 of 2 started, 0 read to the senior answer" in overview
    assert "1 attempt, 50% right (1 of 2)" in overview
    assert '<dd id="overview-lab">2</dd>' in overview  # the experiment's run is not a lab run
    total = len(lab_experiment_titles())
    assert f"1 of {total} tried, 1 with every check passed; 0 of 1 prediction right" in overview
    assert '<dd id="overview-review">' in overview


def test_export_holds_lab_runs_as_summaries_and_experiment_attempts_with_their_verdict(client):
    learner = some_progress(client)
    data = export(client)

    assert "cannot replay or re-run them" in data["note"]
    runs = {r["id"]: r for r in data["lab_runs"]}
    first = learner.lab_runs.filter(label="").order_by("created_at").first()
    assert runs[first.id]["counts"] == {
        "tasks": 2, "receipts": 4, "executions": 4, "duplicates": 2, "suppressed": 0,
    }  # fmt: skip
    assert runs[first.id]["lane"] == "redis-short" and runs[first.id]["status"] == "done"
    [attempt] = data["experiment_attempts"]
    assert attempt["experiment"] == "countdown-beyond-timeout"
    assert (attempt["passed"], attempt["prediction_right"], attempt["prediction"]) == (
        True,
        False,
        3,
    )


def test_an_exported_file_brings_everything_back_in_another_browser(client):
    some_progress(client)
    before = export(client)
    other = Client()
    other.get("/progress/")

    response = upload(other, before)

    assert response.status_code == 302 and response["Location"] == "/progress/?imported=1#import"
    page = other.get("/progress/").content.decode()
    assert "Added: 2 tiers revealed, 1 self-rating, 1 quiz attempt, 2 quiz answers" in page
    after = export(other)
    for key in ("tiers_revealed", "self_ratings", "review", "lab_runs", "experiment_attempts"):
        assert after[key] == before[key], key
    strip = [{k: v for k, v in a.items() if k != "id"} for a in before["quiz_attempts"]]
    assert [{k: v for k, v in a.items() if k != "id"} for a in after["quiz_attempts"]] == strip
    assert "2 (3 imported as summaries)" not in page  # the experiment's run stays out
    assert '<dd id="overview-lab">2 (2 imported as summaries)</dd>' in page
    assert f"1 of {len(lab_experiment_titles())} tried, 1 with every check passed" in page


def test_importing_the_same_file_twice_changes_nothing_the_second_time(client):
    some_progress(client)
    data = export(client)
    other = Client()
    other.get("/progress/")
    upload(other, data)
    learner = client_learner(other)
    once = rows(learner)

    upload(other, data)

    assert rows(learner) == once
    page = other.get("/progress/").content.decode()
    assert "Added:" not in page and "Already here, kept: 2 tiers revealed" in page
    # and the learner's own file into the learner's own browser adds nothing either
    mine = client_learner(client)
    own = rows(mine)
    upload(client, data)
    assert rows(mine) == own


def test_import_never_overwrites_newer_data_and_takes_newer_data_from_the_file(client):
    some_progress(client)
    data = export(client)
    other = Client()
    other.get("/progress/")
    learner = client_learner(other)
    today = timezone.localdate()
    # This browser reviewed the question later than the file did: its schedule stays.
    newer_here = ReviewItem.objects.create(
        learner=learner, kind="question", key=ALPHA, question_slug=ALPHA, due_on=today
        + dt.timedelta(days=30), last_reviewed_on=today + dt.timedelta(days=1), repetitions=4,
    )  # fmt: skip
    # ...and reviewed a claim earlier than the file did: the file's schedule replaces it.
    older_here = ReviewItem.objects.create(
        learner=learner, kind="claim", key=f"{ALPHA}:cost-1", question_slug=ALPHA,
        due_on=today - dt.timedelta(days=9), last_reviewed_on=today - dt.timedelta(days=10),
    )  # fmt: skip
    filed = {r["key"]: r for r in data["review"]}
    run = data["lab_runs"][0]
    ImportedActivity.objects.create(
        learner=learner, kind="lab_run", source_id=run["id"], happened_at=timezone.now(),
        updated_at=timezone.now() + dt.timedelta(hours=1), summary={"status": "kept-here"},
    )  # fmt: skip

    upload(other, data)

    newer_here.refresh_from_db()
    older_here.refresh_from_db()
    assert (newer_here.repetitions, newer_here.due_on) == (4, today + dt.timedelta(days=30))
    assert older_here.last_reviewed_on.isoformat() == filed[f"{ALPHA}:cost-1"]["last_reviewed_on"]
    assert older_here.due_on.isoformat() == filed[f"{ALPHA}:cost-1"]["due_on"]
    kept = learner.imported_activity.get(kind="lab_run", source_id=run["id"])
    assert kept.summary == {"status": "kept-here"}
    page = other.get("/progress/").content.decode()
    assert "Updated (the file&#x27;s copy was newer): 1 review item." in page


def test_an_imported_quiz_shows_its_claims_in_the_order_the_learner_saw_them():
    order = [f"q:c{i}" for i in range(12)]
    assert ordered_keys(claim_keys=keys_for_order(order, 0), seed=0) == order


def valid_file() -> dict:
    now = timezone.now()
    return {
        "format": "teachlab-progress/1",
        "tiers_revealed": [{"question": ALPHA, "tier": "basics", "revealed_at": now.isoformat()}],
    }


def broken(change) -> dict:
    data = valid_file()
    change(data)
    return data


FUTURE = (timezone.now() + dt.timedelta(days=400)).isoformat()
BAD_FILES = [
    ("not-json", b"{'format': nope", "The file is not valid JSON: "),
    ("not-utf8", b"\xff\xfe\x00junk", "The file is not text (UTF-8)"),
    ("a-list", b"[1, 2]", "The file holds JSON, but not a progress file"),
    (
        "nested-past-the-parser",
        b'{"format": "teachlab-progress/1", "note": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "The file nests lists or objects far deeper than a progress file does",
    ),
    (
        "a-5000-digit-integer",
        b'{"format": "teachlab-progress/1", "tiers_revealed": ' + b"9" * 5000 + b"}",
        "The file holds a number thousands of digits long",
    ),
    (
        "wrong-version",
        broken(lambda d: d.update(format="teachlab-progress/2")),
        "format: this file has format 'teachlab-progress/2'; this app reads "
        "'teachlab-progress/1' files",
    ),
    ("no-version", broken(lambda d: d.pop("format")), "format: this file has no format"),
    (
        "unknown-tier",
        broken(lambda d: d["tiers_revealed"][0].update(tier="expert")),
        "tiers_revealed[0].tier: unknown tier 'expert' (expected one of: basics, solid, senior)",
    ),
    (
        "naive-time",
        broken(lambda d: d["tiers_revealed"][0].update(revealed_at="2026-12-01T10:00:00")),
        "tiers_revealed[0].revealed_at: input should have timezone info",
    ),
    (
        "future-time",
        broken(lambda d: d["tiers_revealed"][0].update(revealed_at=FUTURE)),
        f"tiers_revealed[0].revealed_at: {FUTURE} is in the future",
    ),
    (
        "unknown-key",
        broken(lambda d: d["tiers_revealed"][0].update(teir="solid")),
        "tiers_revealed[0]: unknown key 'teir' (expected one of: question, tier, revealed_at)",
    ),
    (
        "bad-answer",
        broken(
            lambda d: d.update(
                quiz_attempts=[
                    {
                        "kind": "question",
                        "question": ALPHA,
                        "started_at": timezone.now().isoformat(),
                        "claims_in_order": [f"{ALPHA}:cost-1"],
                        "answers": [
                            {
                                "claim": f"{ALPHA}:cost-2",
                                "said": "maybe",
                                "correct": "yes",
                                "answered_at": timezone.now().isoformat(),
                            }
                        ],
                    }
                ]
            )
        ),
        "quiz_attempts[0].answers[0].said: unknown answer 'maybe'",
    ),
    (
        "answer-not-in-its-attempt",
        broken(
            lambda d: d.update(
                quiz_attempts=[
                    {
                        "kind": "question",
                        "question": ALPHA,
                        "started_at": timezone.now().isoformat(),
                        "claims_in_order": [f"{ALPHA}:cost-1"],
                        "answers": [
                            {
                                "claim": f"{ALPHA}:cost-2",
                                "said": "holds up",
                                "correct": False,
                                "answered_at": timezone.now().isoformat(),
                            }
                        ],
                    }
                ]
            )
        ),  # fmt: skip
        f"quiz_attempts[0].answers[0].claim: '{ALPHA}:cost-2' is not in claims_in_order",
    ),
    (
        "nul-character",
        broken(lambda d: d["tiers_revealed"][0].update(question="quiz\x00alpha")),
        "tiers_revealed[0].question: a text holds a NUL character",
    ),
    (
        "review-from-the-future",
        broken(
            lambda d: d.update(
                review=[
                    {
                        "kind": "question",
                        "key": ALPHA,
                        "due_on": "2099-01-10",
                        "last_reviewed_on": "2099-01-01",
                        "interval_days": 9,
                        "repetitions": 1,
                        "easiness": 2.5,
                        "reviews": 1,
                        "lapses": 0,
                    }
                ]
            )
        ),  # fmt: skip
        "review[0].last_reviewed_on: 2099-01-01 is in the future",
    ),
    (
        "easiness-out-of-range",
        broken(
            lambda d: d.update(
                review=[
                    {
                        "kind": "claim",
                        "key": f"{ALPHA}:cost-1",
                        "due_on": "2026-12-01",
                        "last_reviewed_on": "2026-11-30",
                        "interval_days": 1,
                        "repetitions": 1,
                        "easiness": 9,
                        "reviews": 1,
                        "lapses": 0,
                    }
                ]
            )
        ),  # fmt: skip
        "review[0].easiness: input should be less than or equal to 5",
    ),
]


@pytest.mark.parametrize(
    ("data", "expected"), [c[1:] for c in BAD_FILES], ids=[c[0] for c in BAD_FILES]
)
def test_a_bad_file_is_refused_with_what_is_wrong_and_nothing_is_stored(client, data, expected):
    client.get("/progress/")
    before = rows(client_learner(client))

    response = upload(client, data)

    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was imported." in html
    problems = html[html.index('id="import-problems"') :]
    assert expected.replace("'", "&#x27;") in problems
    assert rows(client_learner(client)) == before
    assert TierReveal.objects.count() == 0


def test_every_problem_of_an_answer_is_listed_not_just_the_first(client):
    data = next(c[1] for c in BAD_FILES if c[0] == "bad-answer")
    html = upload(client, data).content.decode()
    assert "answers[0].correct: expected true or false, found &#x27;yes&#x27;" in html
    assert "answers[0].said: unknown answer" in html


def test_an_upload_over_the_size_limit_is_refused_before_it_is_read(client, settings):
    settings.PROGRESS_IMPORT_MAX_BYTES = 1024
    client.get("/progress/")
    padded = valid_file() | {"note": "x" * 4000}  # over the limit, within the envelope

    small_over = upload(client, padded)
    # Far over: refused from its Content-Length before Django parses the body, so before the
    # CSRF check too (which would read the body): no token, yet a 400 saying why, not a 403.
    huge = upload(Client(enforce_csrf_checks=True), valid_file() | {"note": "x" * 40_000})

    for response in (small_over, huge):
        assert response.status_code == 400
        assert "a progress file can be at most 1 KB" in response.content.decode()
    assert TierReveal.objects.count() == 0


def test_no_file_is_a_400_with_a_message(client):
    response = client.post("/progress/import/", {})
    assert response.status_code == 400
    assert "Choose the progress file" in response.content.decode()


def test_import_needs_the_csrf_token(client):
    guarded = Client(enforce_csrf_checks=True)
    page = guarded.get("/progress/").content.decode()
    token = page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    raw = json.dumps(valid_file()).encode()

    refused = guarded.post("/progress/import/", {"file": SimpleUploadedFile("p.json", raw)})
    accepted = guarded.post(
        "/progress/import/",
        {"file": SimpleUploadedFile("p.json", raw), "csrfmiddlewaretoken": token},
    )

    assert refused.status_code == 403
    assert accepted.status_code == 302
    assert TierReveal.objects.count() == 1


def test_imported_summaries_follow_the_learner_into_an_account_on_sign_in(client):
    from django.contrib.auth.models import User

    some_progress(client)
    data = export(client)
    account = Learner.objects.create(user=User.objects.create_user("cy", password="horse 42 x"))
    other = Client()
    other.get("/progress/")
    upload(other, data)

    other.post("/accounts/login/", {"username": "cy", "password": "horse 42 x"})

    assert account.imported_activity.count() == len(data["lab_runs"]) + 1
    assert (
        '<dd id="overview-lab">2 (2 imported as summaries)</dd>'
        in other.get("/progress/").content.decode()
    )


@pytest.mark.parametrize(
    ("limit", "value", "says"),
    [
        ("PROGRESS_IMPORT_MAX_ROWS", 3, "one import takes at most 3"),
        ("PROGRESS_IMPORT_MAX_SECONDS", 0, "The import took more than 0 s and was undone"),
    ],
    ids=["more-rows-than-one-import-takes", "out-of-time"],
)
def test_an_import_past_its_row_or_time_cap_is_refused_and_nothing_is_stored(
    client, settings, limit, value, says
):
    setattr(settings, limit, value)
    data = export_of_progress()
    client.get("/progress/")
    response = upload(client, data)
    assert response.status_code == 400
    html = response.content.decode()
    assert says in html and "Nothing was imported." in html
    assert all(n == 0 for n in rows(client_learner(client)).values())


def export_of_progress() -> dict:
    source = Client()
    some_progress(source)
    return export(source)

"""Generated bad input for every form and JSON endpoint (issue 14, item 2): never a 500, and an
input the app refused changes nothing (rows, workshop and attempt columns, the lab's Redis
keys). One test per line of targets.HTTP, plus one spread over the read-only pages.

Django's in-process test client keeps thousands of inputs cheap; the world is built once per
target and the state compared per input, instead of resetting the database each time.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.strategies import BATCH, FUZZ, query
from tests.fuzz.targets import CLIENTS, HTTP, PAGES, PAGES_THAT_RECORD
from tests.fuzz.world import inputs_counted, state, state_changes, world_build
from tests.lessons.quiz_support import QUIZ_FIXTURES

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

OTHER_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
QUERY_NAMES = ["q", "tier", "after", "page", "next"]
CHANGES_WHO_YOU_ARE = {"login", "admin/login/", "logout", "lessons:signup"}


@pytest.fixture
def world(settings, request):
    settings.LESSONS_DIR = QUIZ_FIXTURES
    world = world_build()
    yield world
    inputs_counted(request.node.name, world.sent)


def _send(client, method: str, url: str, data: dict, htmx: bool):
    headers = {"HX-Request": "true"} if htmx else {}
    if method == "POST":
        return client.post(url, data, headers=headers)
    if data:
        url += ("&" if "?" in url else "?") + urlencode(data)
    return client.generic(method, url, headers=headers)


def _check(world, client_name: str, response, may_change: bool) -> None:
    assert response.status_code < 500, response.content[:2000]
    after = state()
    if may_change:
        world.baseline = after
    else:
        assert not state_changes(world.baseline, after), (client_name, response.status_code)


def _strategies(world, name: str) -> dict:
    target = HTTP[name]
    return world.once(
        name,
        lambda: {
            "method": st.sampled_from(target.methods)
            | st.sampled_from(target.methods)
            | st.sampled_from(OTHER_METHODS),
            "url": target.path(world),
            "fields": target.fields(world),
            "client": st.sampled_from(target.clients),
        },
    )


@pytest.mark.parametrize("name", sorted(HTTP))
@FUZZ
@given(data=st.data())
def test_endpoint_never_500s_and_a_refused_input_changes_nothing(world, settings, name, data):
    target = HTTP[name]
    for key, value in target.settings.items():
        setattr(settings, key, value)
    if target.prepare is not None and not world.ids.get("prepared"):
        target.prepare(world)
        world.ids["prepared"] = True
        world.baseline = state()
    draws = _strategies(world, name)
    for _ in range(BATCH):
        method = data.draw(draws["method"], label="method")
        url = data.draw(draws["url"], label="url")
        fields = data.draw(draws["fields"], label="fields")
        client_name = data.draw(draws["client"], label="client")
        htmx = data.draw(st.booleans(), label="htmx")
        client = world.clients[client_name]
        response = _send(client, method, url, fields, htmx)
        world.sent += 1
        # Only a POST the app took may change anything; every other method only reads.
        took = method == "POST" and target.took(response)
        _check(world, client_name, response, took)
        if took:
            if target.after is not None:
                target.after(world)
            # A sign-in, sign-up or sign-out makes the next request create its learner: let
            # a page do that now, so it is not taken for a change made by a refused input.
            if name in CHANGES_WHO_YOU_ARE:
                client.get("/quiz/")
            world.baseline = state()


@FUZZ
@given(data=st.data())
def test_any_page_with_junk_in_its_path_or_query_never_500s_and_changes_nothing(world, data):
    query_draw = world.once("query", lambda: st.none() | query(QUERY_NAMES))
    for _ in range(BATCH):
        page = data.draw(st.sampled_from(sorted(PAGES)), label="page")
        url = data.draw(world.once(page, lambda page=page: PAGES[page](world)), label="url")
        extra = data.draw(query_draw, label="query")
        if extra:
            url += ("&" if "?" in url else "?") + extra
        client_name = data.draw(st.sampled_from(CLIENTS), label="client")
        response = _send(world.clients[client_name], "GET", url, {}, data.draw(st.booleans()))
        world.sent += 1
        may_change = page in PAGES_THAT_RECORD and response.status_code < 400
        _check(world, client_name, response, may_change)

"""Drill: the RabbitMQ under the `rabbit-quorum` lane stops and starts again, with a server, a
worker of that lane (under teachlab.core.devstack's restart loop) and the monitor running.

A node of the drill's own (tests/drills/rabbit.py), never the system RabbitMQ. Checked: while
it is stopped the lab page shows the lane unavailable (to a visitor without the broker's address),
/readyz says so, and a run fired at it is refused with that message and nothing stored; once it
is back the lane is available again and a run on it completes, with the same server process
(no restart of the app). Kept: the run that completed before the outage, and its quorum queue
(durable, on the node's disk). Lost: nothing; the outage refused work instead of taking it.
"""

from __future__ import annotations

import os
import re
import signal

import httpx
import pytest

from tests.drills.rabbit import PrivateRabbit
from tests.drills.stack import fire_run, live_rows, run_status, wait_until
from tests.stack import missing
from tests.stack import test_env as stack_env
from tests.support.http import Visitor
from tests.support.servers import ServerProcess, daphne_argv

pytestmark = [pytest.mark.broker, pytest.mark.slow]
LANE = "rabbit-quorum"


@pytest.fixture(scope="module")
def rabbit():
    if not PrivateRabbit.installed():
        missing("rabbitmq-server is needed for the RabbitMQ drill (apt install rabbitmq-server)")
    node = PrivateRabbit()
    try:
        node.start()
    except Exception as exc:  # noqa: BLE001
        node.stop()
        pytest.fail(f"a private RabbitMQ node did not start: {exc}\n{node.log_tail()}")
    yield node
    node.stop()


@pytest.fixture(scope="module")
def rabbit_side(drill_stack, rabbit):
    """A server and one worker of the lane that reach the drill's RabbitMQ."""
    from teachlab.core.devstack import Child
    from teachlab.lab.runs.lanes import lane_get, worker_argv, worker_name

    env = {**drill_stack.env, "TEACHLAB_RABBIT_URL": rabbit.url}
    lane = lane_get(LANE)
    name = f"{worker_name(lane, 1)}-drill"
    argv = worker_argv(lane, 1)
    argv[argv.index("--name") + 1] = name
    worker = Child(name, argv, stack_env(**env), logs=drill_stack.logs)
    worker.start()
    drill_stack.children.append(worker)  # the restart loop looks after it from now on
    server = ServerProcess(daphne_argv, env).start()
    try:
        wait_until(
            lambda: any(w["name"] == name and w["alive"] for w in drill_stack.workers()),
            timeout=90,
            what=f"{name} serving",
        )
        yield server
    finally:
        server.stop()
        drill_stack.children.remove(worker)
        if worker.proc.poll() is None:
            os.killpg(worker.proc.pid, signal.SIGKILL)  # its node goes next: nothing to hand back
            worker.proc.wait(timeout=15)


def lane_card(base: str) -> str:
    response = httpx.get(f"{base}/lab/", timeout=30)
    response.raise_for_status()
    html = response.text
    cards = re.findall(r'<li class="lane-card[^"]*">(.*?)</li>', html, re.S)
    found = [c for c in cards if f"<h3>{LANE}</h3>" in c]
    assert found, f"no {LANE} card on /lab/"
    return found[0]


def readiness(base: str) -> tuple[int, dict]:
    response = httpx.get(f"{base}/readyz", timeout=30)
    return response.status_code, response.json()


def runs_of_lane() -> int:
    return live_rows("SELECT COUNT(*) FROM lab_run WHERE lane = ?", (LANE,))[0][0]


def test_rabbitmq_stopped_shows_the_lane_unavailable_and_why_then_back_without_a_restart(
    rabbit, rabbit_side
):
    server = rabbit_side
    pid = server.proc.pid
    visitor = Visitor()
    assert "Available" in lane_card(server.url)
    before = fire_run(server.url, visitor, lane=LANE, count=2, countdown=1)
    wait_until(lambda: run_status(before) == "done", timeout=40, what="a run before the outage")

    rabbit.cut()
    card = wait_until(
        lambda: (c := lane_card(server.url)) and "Unavailable" in c and c,
        timeout=20,
        what="the lane shown unavailable",
    )
    # A visitor on a shared server (controls not local) is not shown the broker's address.
    assert "broker is not answering" in card and f":{rabbit.port}" not in card
    status, report = readiness(server.url)
    assert status == 503 and report["checks"]["lanes"][LANE] == "down"
    assert report["checks"]["lanes"]["redis-short"] == "up"
    stored = runs_of_lane()
    url, code, body = visitor.post(
        f"{server.url}/lab/",
        f"{server.url}/lab/",
        {"lane": LANE, "count": "1", "countdown": "0", "duration": "0"},
    )
    assert code == 400 and "/lab/runs/" not in url
    assert "broker is not answering" in body and f":{rabbit.port}" not in body
    assert runs_of_lane() == stored, "a refused run was stored"

    rabbit.restore()
    wait_until(lambda: "Available" in lane_card(server.url) and "Unavailable" not in
               lane_card(server.url), timeout=30, what="the lane available again")  # fmt: skip
    assert readiness(server.url)[1]["checks"]["lanes"][LANE] == "up"
    after = fire_run(server.url, visitor, lane=LANE, count=2, countdown=1)
    wait_until(lambda: run_status(after) == "done", timeout=60, what="a run after the outage")
    assert server.proc.pid == pid and server.proc.poll() is None  # the same server throughout
    assert run_status(before) == "done"

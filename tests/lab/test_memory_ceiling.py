"""The workers' memory ceiling (settings.LAB_WORKER_MAX_MEMORY_MB): a real lab worker over it
while holding deliveries shuts down warmly, leaves a notice the lab page and the workers
panel show, and its deliveries go back to the queue for the next process."""

from __future__ import annotations

import subprocess
import time

import pytest

from teachlab.lab.runs.firing import run_fire
from teachlab.lab.worker.heartbeat import memory_over
from teachlab.lab.worker.workers import memory_restarts, workers_list
from tests import stack
from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)
NAME = "redis-short-memtest"


def test_only_a_worker_over_the_ceiling_with_deliveries_in_hand_restarts():
    assert memory_over(rss=200, ceiling=100, holding=1)
    assert not memory_over(rss=200, ceiling=100, holding=0)  # a restart would not shrink it
    assert not memory_over(rss=100, ceiling=100, holding=5)
    assert not memory_over(rss=200, ceiling=0, holding=5)  # 0: no ceiling


@pytest.fixture
def own_redis(settings):
    """A Redis of this test's own, so no other test's worker takes the lane's messages."""
    server = RedisServer(stack.STATE).start()
    settings.REDIS_URL = server.url
    yield server.url
    server.stop()


def _worker(url: str, ceiling_mb: int) -> subprocess.Popen:
    from teachlab.lab.runs.lanes import lane_get, worker_argv

    argv = worker_argv(lane_get("redis-short"), 1)
    argv[argv.index("--name") + 1] = NAME
    env = stack.test_env(TEACHLAB_REDIS_URL=url, TEACHLAB_LAB_WORKER_MAX_MEMORY_MB=str(ceiling_mb))
    return subprocess.Popen(
        argv, cwd=stack.BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _ours(pid: int) -> dict | None:
    return next((w for w in workers_list() if w["name"] == NAME and w["pid"] == pid), None)


def _wait(predicate, *, timeout: float = 90, what: str = ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"not within {timeout}s: {what}")


@pytest.mark.broker  # a worker process of its own: outside the fast loop
@pytest.mark.slow
def test_a_worker_over_its_ceiling_hands_back_its_deliveries_and_the_lab_says_so(
    own_redis, settings, client
):
    from lessons.models import Learner

    settings.LAB_LOCAL_CONTROLS = True
    first = _worker(own_redis, ceiling_mb=1)  # any worker is over 1 MB
    try:
        # holding nothing, it stays up: a restart would not make it smaller
        _wait(lambda: (_ours(first.pid) or {}).get("alive"), what="worker alive")
        time.sleep(2)
        assert first.poll() is None
        run = run_fire(
            learner=Learner.objects.create(),
            lane="redis-short",
            params={"countdown": 120},
            check_limits=False,
        )
        assert first.wait(timeout=60) == 0  # a warm shutdown, not a kill
    finally:
        if first.poll() is None:
            first.kill()
    notice = _wait(memory_restarts, what="a memory notice")[0]
    assert notice["name"] == NAME and notice["lane"] == "redis-short"
    assert notice["held"] == 1 and notice["rss"] > notice["ceiling"] == 1_000_000

    lab_page = client.get("/lab/").content.decode()
    assert f"{NAME} was restarted for memory at" in lab_page
    assert "holding 1 delivery, which went back to the queue" in lab_page
    panel = client.get("/lab/workers/").content.decode()
    assert f"{NAME} was restarted for memory at" in panel

    # the supervisor's fresh process gets the task it held
    second = _worker(own_redis, ceiling_mb=0)
    try:
        worker = _wait(
            lambda: (w := _ours(second.pid)) and w["alive"] and w["held"] and w,
            what="the held task redelivered to the new process",
        )
        assert worker["held_ids"] == run.task_ids
        assert "MB" in worker["memory"]
    finally:
        second.terminate()
        second.wait(timeout=30)


def test_prefork_lanes_also_replace_a_pool_child_past_the_ceiling(settings):
    from teachlab.lab.runs.lanes import lane_get
    from teachlab.lab.worker.celery_app import _configure

    settings.LAB_WORKER_MAX_MEMORY_MB = 768
    from celery import Celery

    prefork, threads = Celery(set_as_current=False), Celery(set_as_current=False)
    _configure(prefork, lane_get("redis-prefork"))
    _configure(threads, lane_get("redis-short"))
    assert prefork.conf.worker_max_memory_per_child == 768_000_000 // 1024  # KiB
    assert threads.conf.worker_max_memory_per_child is None  # threads: the heartbeat's check

"""The project boots: settings load, the private test Redis answers, the live server serves."""

import redis
from django.conf import settings


def test_tests_use_their_own_redis_server_not_the_dev_one():
    assert not settings.REDIS_URL.endswith(":6379")
    assert redis.Redis.from_url(settings.REDIS_URL).ping()

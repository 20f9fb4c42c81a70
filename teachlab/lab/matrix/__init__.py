"""`lab matrix`: the guided experiments run again on other Celery/kombu releases and Redis
servers, with the versions each worker and broker reported kept in lessons/verified/."""

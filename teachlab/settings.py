"""Settings for teachlab, read from the environment with safe local defaults.

Every setting that differs between a laptop, CI and docker compose is an env var
named TEACHLAB_<SETTING> (DATABASE_URL keeps its usual name); the defaults suit
`scripts/run` on one machine: SQLite, static files straight from static/. Several web
processes or machines (scripts/serve) share PostgreSQL through DATABASE_URL and Redis.
"""

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str) -> str:
    return os.environ.get(f"TEACHLAB_{name}", default)


def env_bool(name: str, default: bool) -> bool:
    return env(name, "1" if default else "0").lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    return int(env(name, str(default)))


# https://docs.djangoproject.com/en/5.2/ref/settings/#secret-key
SECRET_KEY = env("SECRET_KEY", "local-only-not-secret-change-me-in-production-0123456789")
DEBUG = env_bool("DEBUG", True)
ALLOWED_HOSTS = [h for h in env("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in env("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "template_partials",
    "lessons",
    "teachlab.lab",
    "teachlab.lab.experiments",
    "teachlab.workshop",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "teachlab.cookies.nul_cookies_middleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "teachlab.urls"
ASGI_APPLICATION = "teachlab.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# DATABASE_URL (the usual name, no TEACHLAB_ prefix) picks PostgreSQL for several web
# processes, workers on other machines, or CI: postgres://user:pass@host:5432/name.
# Unset, SQLite in WAL mode is the embedded default: it takes concurrent writers (web +
# several workers on one disk) well enough for a classroom, and IMMEDIATE transactions avoid
# "database is locked" on upgrade from read to write. The web process, the lab workers, the
# recorder and the monitor all import these settings, so they always share one database.
# Code that must not race (votes, predictions, ratings) locks rows with select_for_update,
# which PostgreSQL honours and SQLite's write lock makes unnecessary.
# https://docs.djangoproject.com/en/5.2/ref/databases/#sqlite-notes
DB_PATH = Path(env("DB_PATH", str(BASE_DIR / "var" / "teachlab.sqlite3")))
DATABASE_URL = os.environ.get("DATABASE_URL", "").strip()
if DATABASE_URL:
    import dj_database_url

    # Under ASGI Django advises against persistent connections (0: one per request/task).
    DATABASES = {
        "default": dj_database_url.parse(
            DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 0), conn_health_checks=True
        )
    }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DB_PATH,
            "OPTIONS": {
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "lessons:index"
LOGOUT_REDIRECT_URL = "lessons:index"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# WhiteNoise serves static files from the app itself, so a workshop room or a replica behind
# a proxy needs nothing else. With DEBUG off the files are collected (scripts/serve runs
# collectstatic) under content-hashed names with gzip copies beside them, and served
# with far-future cache headers; with DEBUG on they come straight from static/.
# https://whitenoise.readthedocs.io/en/stable/django.html
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env("STATIC_ROOT", str(BASE_DIR / "var" / "static")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# One YAML file per interview question; lessons/catalog.py reloads them when they change.
LESSONS_DIR = Path(env("LESSONS_DIR", str(BASE_DIR / "lessons" / "content")))

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = 60 * 60 * 24 * 365
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

# --- Redis -------------------------------------------------------------------------------
# One Redis server; each use gets its own database number so they never see each other's
# keys. Tests point TEACHLAB_REDIS_URL at a server of their own.
REDIS_URL = env("REDIS_URL", "redis://127.0.0.1:6379").rstrip("/")
REDIS_DB_CHANNELS = env_int("REDIS_DB_CHANNELS", 0)
REDIS_DB_APP = env_int("REDIS_DB_APP", 3)  # rate limits, guard keys, worker registry
RABBIT_URL = env("RABBIT_URL", "amqp://guest:guest@127.0.0.1:5672//")

# https://channels.readthedocs.io/en/stable/topics/channel_layers.html
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            "hosts": [f"{REDIS_URL}/{REDIS_DB_CHANNELS}"],
            "prefix": env("CHANNEL_PREFIX", "teachlab"),
            "capacity": 5000,
            "expiry": 30,
        },
    }
}
# TEACHLAB_CHANNEL_LAYER: "pubsub" (default) or "core" (channels-redis' list-based layer).
# Pub/sub instead of per-channel lists: a group message crosses Redis once per server process instead of being popped per socket in several round
# trips; with 50 sockets on one run, p95 went from ~200 ms to ~20 ms (teachlab/lab/README.md).
if env("CHANNEL_LAYER", "pubsub") == "pubsub":
    CHANNEL_LAYERS["default"] = {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {
            "hosts": [f"{REDIS_URL}/{REDIS_DB_CHANNELS}"],
            "prefix": env("CHANNEL_PREFIX", "teachlab"),
        },
    }

# The project-wide Celery app (teachlab/celery.py) reads CELERY_* settings; the lab's lanes
# build their own apps from teachlab/lab/lanes.py.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", f"{REDIS_URL}/4")
CELERY_TASK_IGNORE_RESULT = True

# --- The lab -----------------------------------------------------------------------------
# Worker controls (warm shutdown, crash, restart) are open to everyone only on a local run:
# scripts/run sets TEACHLAB_LOCAL_CONTROLS=1. Otherwise they are for staff.
LAB_LOCAL_CONTROLS = env_bool("LOCAL_CONTROLS", False)
LAB_MAX_TASKS_PER_RUN = env_int("LAB_MAX_TASKS_PER_RUN", 2000)
LAB_MAX_COUNTDOWN = env_int("LAB_MAX_COUNTDOWN", 3 * 60 * 60)
LAB_MAX_RUNS_AT_ONCE = env_int("LAB_MAX_RUNS_AT_ONCE", 3)
LAB_RUNS_PER_MINUTE = env_int("LAB_RUNS_PER_MINUTE", 10)
# Workers send a burst of one run's events as one `lab.events` channel message (see
# teachlab/lab/README.md); the lab consumer and the workshop hub both take that type.
LAB_EVENT_BATCHES = env_bool("LAB_EVENT_BATCHES", True)
# Experiment 11 (lessons/experiments/default-restore-sweep.yaml) needs kombu's default
# restore sweep (10 s x 10, BROKER-FACTS 1) on a database no tuned sweeper shares.
LAB_EXTRA_LANES = [
    {
        "name": "redis-default-sweep",
        "broker": "redis",
        "db": env_int("REDIS_DB_DEFAULT_SWEEP", 5),
        "visibility_timeout": 10,
        "restore_interval": 10,
        "restore_throttle": 10,
        "workers": 1,
        "listed": False,
        "title": "Redis, 10 s timeout, kombu's default restore sweep",
        "summary": "Stale messages wait for a sweep that scans about every 100 s.",
    },
]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
    "loggers": {"daphne": {"level": "WARNING"}, "django.channels.server": {"level": "WARNING"}},
}

# --- Workshop rooms --------------------------------------------------------------------------
# Seats per room: above any real workshop (the benchmark runs 300), below a scripted flood.
WORKSHOP_MAX_SEATS = env_int("WORKSHOP_MAX_SEATS", 500)

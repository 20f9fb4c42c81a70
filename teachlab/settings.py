"""Settings for teachlab, read from the environment with safe local defaults.

Every setting that differs between a laptop, CI and docker compose is an env var
named TEACHLAB_<SETTING> (DATABASE_URL keeps its usual name); the defaults suit
`scripts/run` on one machine: SQLite, static files straight from static/. Several web
processes or machines (scripts/serve) share PostgreSQL through DATABASE_URL and Redis.

Longer than 400 lines on purpose: every tunable lives here, each with the line that says what
it does (docs/configuration.md lists them), rather than read from the environment elsewhere.
"""

import os
import tempfile
from pathlib import Path

from teachlab.core.hardening import (
    LOCAL_SECRET_KEY,
    plain_http_off,
    plain_http_warn,
    secret_key_check,
)

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str) -> str:
    return os.environ.get(f"TEACHLAB_{name}", default)


def env_bool(name: str, default: bool) -> bool:
    return env(name, "1" if default else "0").lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    return int(env(name, str(default)))


def env_float(name: str, default: float) -> float:
    return float(env(name, str(default)))


# Two modes, one switch: TEACHLAB_DEBUG=1 (the default) is a laptop; TEACHLAB_DEBUG=0 is
# production, which refuses the repository's key and turns every protection below on.
# https://docs.djangoproject.com/en/5.2/ref/settings/#secret-key
DEBUG = env_bool("DEBUG", True)
SECRET_KEY = env("SECRET_KEY", LOCAL_SECRET_KEY)
if not DEBUG:
    secret_key_check(SECRET_KEY)
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
    "csp",
    "axes",
    "channels",
    "django_htmx",
    "template_partials",
    "lessons",
    "teachlab.lab",
    "teachlab.lab.experiments",
    "teachlab.workshop",
]

MIDDLEWARE = [
    # First: pooled database connections go back once the chain has answered (syncchain.py).
    "teachlab.core.syncchain.connections_return_middleware",
    # Before the host check and the HTTPS redirect: a container probe asks by IP over HTTP.
    "teachlab.core.health.HealthMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    "teachlab.core.cookies.nul_cookies_middleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "teachlab.core.identity.visitor_cookie_middleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Answers a locked-out sign-in with AXES_HTTP_RESPONSE_CODE (429) and our message.
    "axes.middleware.AxesMiddleware",
    # Last, and sync only: the chain above runs in one thread per request (syncchain.py).
    "teachlab.core.syncchain.SyncChainMiddleware",
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
                "lessons.themes.theme_context",
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
# Seconds a query waits for a lock another connection holds before the request gives up with
# a 503 and a message (teachlab/core/dbbusy.py): SQLite's busy timeout, PostgreSQL's lock_timeout
# (unset, PostgreSQL would wait for ever).
DB_LOCK_TIMEOUT = float(env("DB_LOCK_TIMEOUT", "30"))
if DATABASE_URL:
    import dj_database_url

    # Under ASGI Django advises against persistent connections, and each request runs in a
    # thread of its own, so without a pool every request in flight opened a connection: 300
    # clients on two processes ran PostgreSQL out of them ("too many clients already",
    # docs/measurements/history/soak.md). A bounded pool per process (Django 5.2 +
    # psycopg_pool) makes the overflow wait
    # for a free connection instead; one not free within DB_POOL_TIMEOUT seconds is the same
    # 503 with a message as a locked database. DB_POOL_SIZE=0 turns the pool off.
    DB_POOL_SIZE = env_int("DB_POOL_SIZE", 10)
    DATABASES = {
        "default": dj_database_url.parse(
            DATABASE_URL,
            conn_max_age=0 if DB_POOL_SIZE else env_int("DB_CONN_MAX_AGE", 0),
            conn_health_checks=True,
        )
    }
    _db_options = DATABASES["default"].setdefault("OPTIONS", {})
    _db_options.setdefault("options", f"-c lock_timeout={int(DB_LOCK_TIMEOUT * 1000)}")
    if DB_POOL_SIZE > 0:
        _db_options["pool"] = {
            "min_size": 1,
            "max_size": DB_POOL_SIZE,
            "timeout": float(env("DB_POOL_TIMEOUT", "10")),
        }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DB_PATH,
            "OPTIONS": {
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": DB_LOCK_TIMEOUT,
            },
        }
    }
# Threads for the sockets' database work (teachlab/core/dbasync.py), apart from the event
# loop's default executor: as many as the pool has connections, so none waits for one idle.
DB_ASYNC_THREADS = env_int("DB_ASYNC_THREADS", (DB_POOL_SIZE if DATABASE_URL else 0) or 8)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": env_int("PASSWORD_MIN_LENGTH", 10)},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes first: a locked-out sign-in is refused before the password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "lessons:index"
LOGOUT_REDIRECT_URL = "lessons:index"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
# English only, with no catalogues: translation machinery off. Every template variable paid for
# it, and the lab renders each live batch on the server (docs/measurements/history/lab.md).
USE_I18N = False
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
# The glossary (lessons/glossary.py): one YAML file of terms, checked like the lessons. Empty:
# glossary.yaml beside the lessons folder (lessons/glossary.yaml); a folder without one has none.
GLOSSARY_FILE = env("GLOSSARY_FILE", "")
# How stale the lessons may be: a process looks at the lesson files for edits at most this
# often (lessons/catalog.py). 0 looks on every use, as the tests do.
LESSONS_RECHECK_SECONDS = float(env("LESSONS_RECHECK_SECONDS", "1"))
# Largest progress file /progress/import/ reads (bytes); a year of daily study exports to
# well under 1 MB, so 2 MB refuses junk before it is parsed.
PROGRESS_IMPORT_MAX_BYTES = env_int("PROGRESS_IMPORT_MAX_BYTES", 2 * 1024 * 1024)
# Largest request body any page reads (bytes), enforced while it is read (teachlab/core/bodylimit.py):
# the largest real one is a progress file (above), so a learner whose file is a little too
# large still gets the import page's own message.
MAX_REQUEST_BYTES = env_int("MAX_REQUEST_BYTES", 4 * 1024 * 1024)
# Rows one import may write (records and quiz answers) and seconds it may take before it is
# undone: 2 MB of small records was 18,500 rows and about 15 s of database work (issue 26).
PROGRESS_IMPORT_MAX_ROWS = env_int("PROGRESS_IMPORT_MAX_ROWS", 10_000)
PROGRESS_IMPORT_MAX_SECONDS = float(env("PROGRESS_IMPORT_MAX_SECONDS", "10"))

# --- Security: production mode is secure by default ------------------------------------------
# Each HTTPS protection can be turned off for a plain-HTTP room network (scripts/run
# --classroom does); settings then print a warning naming what is off.
# https://docs.djangoproject.com/en/5.2/howto/deployment/checklist/
PRODUCTION = not DEBUG
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
# Anonymous learners' progress hangs on the session, so a laptop keeps it a year; a public
# server keeps a stolen cookie useful for two weeks at most.
SESSION_COOKIE_AGE = 60 * 60 * 24 * env_int("SESSION_DAYS", 14 if PRODUCTION else 365)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = PRODUCTION and env_bool("SECURE_COOKIES", True)
SECURE_HSTS_SECONDS = env_int("HSTS_SECONDS", 60 * 60 * 24 * 365) if PRODUCTION else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
SECURE_SSL_REDIRECT = PRODUCTION and env_bool("SSL_REDIRECT", True)
# Trust X-Forwarded-Proto only from a proxy that sets it (and strips a client's own).
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https")
    if PRODUCTION and env_bool("PROXY_SSL_HEADER", True)
    else None
)
if PRODUCTION:
    plain_http_warn(plain_http_off(os.environ))
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

# Content-Security-Policy (django-csp), in both modes so a local run shows a violation in the
# console before production does. No inline script or style: data for CSS comes in data-css
# attributes that static/js/css-vars.js applies. 'self' covers same-origin ws:/wss: (CSP 3).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# Sign-in throttle: django-axes on /accounts/login/ and /admin/login/, counting failures per
# normalised username (NFKC + casefold, teachlab/core/identity.py) and client address together, in
# the database (every web process shares it). Locked out: HTTP 429 and a message.
SIGNIN_MAX_FAILURES = env_int("SIGNIN_MAX_FAILURES", 5)
SIGNIN_WINDOW_SECONDS = env_int("SIGNIN_WINDOW_SECONDS", 15 * 60)
AXES_FAILURE_LIMIT = SIGNIN_MAX_FAILURES
AXES_COOLOFF_TIME = SIGNIN_WINDOW_SECONDS / 3600  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_USERNAME_CALLABLE = "teachlab.core.identity.axes_username"
AXES_CLIENT_IP_CALLABLE = "teachlab.core.identity.axes_client_ip"
AXES_LOCKOUT_CALLABLE = "teachlab.core.signin.lockout_response"
AXES_HTTP_RESPONSE_CODE = 429
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
# Proxies whose X-Forwarded-For is believed (addresses or networks, comma-separated). Empty
# (the default): the direct peer is the client, whatever headers it sends.
TRUSTED_PROXIES = [p.strip() for p in env("TRUSTED_PROXIES", "").split(",") if p.strip()]
# New anonymous learners (with a visitor cookie) each network may start per hour with a quota
# of their own; past it, and for requests with no cookie at all, quotas come from the
# network's one shared pool (teachlab/core/identity.py). 120: a class of 40 behind one router,
# three times over.
ANON_LEARNERS_PER_NETWORK_PER_HOUR = env_int("ANON_LEARNERS_PER_NETWORK_PER_HOUR", 120)
# Anonymous learners unseen this long are deleted by `manage.py prune_learners` (hourly too).
ANON_LEARNER_DAYS = env_int("ANON_LEARNER_DAYS", 14 if PRODUCTION else 365)
# Sign-up: accounts created per client network per hour (teachlab/core/ratelimits.py).
SIGNUPS_PER_NETWORK_PER_HOUR = env_int("SIGNUPS_PER_NETWORK_PER_HOUR", 10)

# --- Redis -------------------------------------------------------------------------------
# One Redis server; each use gets its own database number so they never see each other's
# keys. Tests point TEACHLAB_REDIS_URL at a server of their own.
REDIS_URL = env("REDIS_URL", "redis://127.0.0.1:6379").rstrip("/")
REDIS_DB_CHANNELS = env_int("REDIS_DB_CHANNELS", 0)
REDIS_DB_APP = env_int("REDIS_DB_APP", 3)  # rate limits, guard keys, worker registry
# The lab lanes' Redis broker; empty: REDIS_URL's server. `lab matrix` points the lanes (and
# the workers it starts) at a private server of another Redis version (teachlab/lab/matrix/).
LAB_BROKER_REDIS_URL = env("LAB_BROKER_REDIS_URL", "").rstrip("/")
# The redis-noeviction lane's server: a Redis of its own with a small maxmemory and
# `noeviction` (teachlab.lab.runs.lanetable.NOEVICTION_SERVER_ARGS); scripts/run starts one here.
LAB_NOEVICTION_REDIS_URL = env("LAB_NOEVICTION_REDIS_URL", "redis://127.0.0.1:6390").rstrip("/")
# `lab matrix` keeps its worker registry and event streams in this database, apart from the lab.
LAB_MATRIX_DB_APP = env_int("LAB_MATRIX_DB_APP", 12)
# Where `lab matrix` stores its records; empty: lessons/verified/ (tests point it elsewhere).
LAB_VERIFIED_DIR = env("LAB_VERIFIED_DIR", "")
# Every rate limit's keys in that database start with this (teachlab/core/ratelimits.py).
RATELIMIT_KEY_PREFIX = env("RATELIMIT_KEY_PREFIX", "teachlab-limits")
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
# trips; with 50 sockets on one run, p95 went from ~200 ms to ~20 ms.
if env("CHANNEL_LAYER", "pubsub") == "pubsub":
    CHANNEL_LAYERS["default"] = {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {
            "hosts": [f"{REDIS_URL}/{REDIS_DB_CHANNELS}"],
            "prefix": env("CHANNEL_PREFIX", "teachlab"),
        },
    }
# Sockets fed by their process's hub (teachlab/core/dbasync.py, HubFed) name this in-process layer:
# the channel Channels opens for each of them stays in memory instead of subscribing in Redis.
CHANNEL_LAYERS["hub-fed"] = {"BACKEND": "channels.layers.InMemoryChannelLayer"}

# The project's own jobs (teachlab/celery.py): experiment attempts run in the jobs worker
# (`celery -A teachlab worker -Q teachlab-jobs`), never in the web process. Not a lab lane:
# those build their own Celery apps from teachlab/lab/runs/lanes.py and are what the lab studies.
REDIS_DB_JOBS = env_int("REDIS_DB_JOBS", 4)
CELERY_BROKER_URL = env("CELERY_BROKER_URL", f"{REDIS_URL}/{REDIS_DB_JOBS}")
CELERY_TASK_DEFAULT_QUEUE = "teachlab-jobs"
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_TIMEOUT = 3  # a web request that cannot queue says so within seconds
# Attempts mostly wait on the lanes, as they did in the web process's threads: one process of
# threads, as many as attempts may run at once, so a queued attempt starts straight away.
LAB_EXPERIMENTS_AT_ONCE = env_int("LAB_EXPERIMENTS_AT_ONCE", 4)
CELERY_WORKER_POOL = "threads"
CELERY_WORKER_CONCURRENCY = LAB_EXPERIMENTS_AT_ONCE
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Periodic jobs, run by the jobs worker's embedded beat (teachlab/celery.py): anonymous
# learners nobody can reach any more are pruned hourly (lessons/pruning.py).
CELERY_BEAT_SCHEDULE = {
    "prune-anonymous-learners": {"task": "teachlab.learners_prune", "schedule": 3600.0},
}
CELERY_BEAT_SCHEDULE_FILENAME = env(
    "BEAT_SCHEDULE", os.path.join(tempfile.gettempdir(), "teachlab-celerybeat-schedule")
)

# --- The lab -----------------------------------------------------------------------------
# Worker controls (warm shutdown, crash, restart) are open to everyone only on a local run:
# scripts/run sets TEACHLAB_LOCAL_CONTROLS=1. Otherwise they are for staff, whatever DEBUG is.
LAB_LOCAL_CONTROLS = env_bool("LOCAL_CONTROLS", False)
LAB_MAX_TASKS_PER_RUN = env_int("LAB_MAX_TASKS_PER_RUN", 2000)
LAB_MAX_COUNTDOWN = env_int("LAB_MAX_COUNTDOWN", 3 * 60 * 60)
LAB_MAX_RUNS_AT_ONCE = env_int("LAB_MAX_RUNS_AT_ONCE", 3)
LAB_RUNS_PER_MINUTE = env_int("LAB_RUNS_PER_MINUTE", 10)
# Runs the whole server accepts per minute from everyone together (0: no class-wide limit);
# classroom mode sets it so thirty laptops cannot swamp one instructor's workers.
LAB_CLASS_RUNS_PER_MINUTE = env_int("LAB_CLASS_RUNS_PER_MINUTE", 0)
# What one run may cost (teachlab/lab/runs/costs.py estimates it before firing). A delivery is one
# copy a worker receives; each held copy is about 12 KB of worker memory (measured), so
# 10,000 is about 120 MB. count=300, countdown=90 on redis-short is about 2,700.
LAB_MAX_DELIVERIES_PER_RUN = env_int("LAB_MAX_DELIVERIES_PER_RUN", 10_000)
# Deliveries one person (their learner's payer, teachlab/core/identity.py) may fire per hour.
LAB_DELIVERIES_PER_HOUR = env_int("LAB_DELIVERIES_PER_HOUR", 30_000)
# Copies the live runs of everyone together may have a lane's workers hold at once: about
# 480 MB, shared by the lane's two workers, under LAB_WORKER_MAX_MEMORY_MB each.
LAB_MAX_HELD_PER_LANE = env_int("LAB_MAX_HELD_PER_LANE", 40_000)
# What one client network (an address, an IPv6 /64: a household, a classroom behind one
# router) may have going at once, whatever learners it mints: runs, and copies held (about
# 12 KB each; 20,000 is half a lane). Forty learners behind one router each still get their
# LAB_MAX_RUNS_AT_ONCE (3): 120 runs. 0: no limit.
LAB_NETWORK_MAX_RUNS_AT_ONCE = env_int("LAB_NETWORK_MAX_RUNS_AT_ONCE", 120)
LAB_NETWORK_MAX_HELD = env_int("LAB_NETWORK_MAX_HELD", 20_000)
# A lab worker whose resident memory passes this (MB) while it holds deliveries shuts down
# warmly and is started again (teachlab/lab/worker/workers.py); prefork lanes also replace a pool
# child past it (worker_max_memory_per_child). An idle worker is about 125 MB; the lane
# limit above all on one worker would be about 590 MB. 0: no ceiling.
LAB_WORKER_MAX_MEMORY_MB = env_int("LAB_WORKER_MAX_MEMORY_MB", 768)
# The live path's pacing (docs/configuration.md; measured in docs/measurements/history/lab.md):
# a run reader gathers a burst's start, then keeps its frames a least gap apart; the recorder
# stores one bigger batch per gap during a burst.
LAB_HUB_GATHER_SECONDS = env_float("LAB_HUB_GATHER", 0.015)
LAB_HUB_MIN_GAP_SECONDS = env_float("LAB_HUB_MIN_GAP", 0.015)
LAB_RECORDER_GAP_SECONDS = env_float("LAB_RECORDER_GAP", 0.5)
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
    # Time and source on every line: a server's log is read after the fact ("when did the
    # 503s start?"), beside gunicorn's own timestamped lines.
    "formatters": {"stamped": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "stamped"}},
    "filters": {"without_traceback": {"()": "teachlab.core.logfilters.WithoutTraceback"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
    "loggers": {
        "daphne": {"level": "WARNING"},
        "django.channels.server": {"level": "WARNING"},
        # A bad Host is one line (the value sent), not a traceback per scanner's probe.
        "django.security.DisallowedHost": {"filters": ["without_traceback"]},
    },
}

# --- WebSockets ------------------------------------------------------------------------------
# The largest frame a browser may send (bytes). Pages send small JSON (a vote, a resync; the
# workshop's own frames stop at 4 KiB), so 64 KiB is room to spare. uvicorn refuses a larger
# frame from its header, before reading it (close 1009); the consumers refuse it too, for any
# other server. uvicorn's own default is 16 MiB held in memory per frame.
WS_MAX_FRAME_BYTES = env_int("WS_MAX_FRAME_BYTES", 64 * 1024)

# --- Workshop rooms --------------------------------------------------------------------------
# Seats per room: above any real workshop (the benchmark runs 300), below a scripted flood.
WORKSHOP_MAX_SEATS = env_int("WORKSHOP_MAX_SEATS", 500)
# Frames every participant of one room may send together per 10 s, besides each seat's own
# 20 (teachlab/workshop/ratelimit.py): scripted seats share this one budget.
WORKSHOP_ROOM_FRAMES_PER_WINDOW = env_int("WORKSHOP_ROOM_FRAMES", 1000)
# Joins per client network (an address, an IPv6 /64) per window, on by default: 60 lets a
# class of forty behind one router join at once. 0 turns it off (the 300-seat benchmark from
# one machine: run that server with TEACHLAB_WORKSHOP_JOINS_PER_ADDRESS=0).
WORKSHOP_JOINS_PER_ADDRESS = env_int("WORKSHOP_JOINS_PER_ADDRESS", 60)
WORKSHOP_JOIN_WINDOW_SECONDS = env_int("WORKSHOP_JOIN_WINDOW_SECONDS", 60)
# The address participants type or scan; "" builds it from the request, which is a loopback
# address when the presenter opened the page as localhost.
WORKSHOP_PUBLIC_URL = env("PUBLIC_URL", "").rstrip("/")
# The classroom's time zone (an IANA name, e.g. Europe/Berlin) for the times in the results'
# CSVs: a spreadsheet cell has no zone, so they are written as local time, the zone in the
# column's header. Defaults to TIME_ZONE.
WORKSHOP_TIME_ZONE = env("WORKSHOP_TIME_ZONE", TIME_ZONE)

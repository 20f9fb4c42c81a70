"""The image and the compose file, checked without a Docker engine (none runs here): compose
validates them, and the worker services follow the lanes table."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from teachlab.lab.runs.lanes import lanes, worker_argv, worker_name
from tests.stack import BASE_DIR, missing

COMPOSE_FILE = BASE_DIR / "docker-compose.yml"
NEEDED = {
    "TEACHLAB_SECRET_KEY": "k" * 60,
    "POSTGRES_PASSWORD": "pg-secret",
    "RABBITMQ_PASSWORD": "rabbit-secret",
}


def compose_command() -> list[str]:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    missing("docker-compose not found (apt-get install -y docker-compose; scripts/test does)")
    return []


def compose_config(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TEACHLAB_", "POSTGRES_", "RABBITMQ_"))
    }
    return subprocess.run(
        [*compose_command(), "-f", str(COMPOSE_FILE), "config", *args],
        cwd=BASE_DIR,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def compose() -> dict:
    done = compose_config(**NEEDED)
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout)


def test_compose_config_is_valid():
    done = compose_config("-q", **NEEDED)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("name", sorted(NEEDED))
def test_compose_refuses_to_start_without_each_secret_naming_it(name):
    done = compose_config("-q", **{k: v for k, v in NEEDED.items() if k != name})
    assert done.returncode != 0
    assert f"set {name}" in done.stderr


def test_compose_worker_services_follow_the_lanes_table(compose):
    expected = {}
    for lane in lanes():
        for number in range(1, lane.workers + 1):
            argv = worker_argv(lane, number)
            assert argv[0] == sys.executable
            expected[f"worker-{worker_name(lane, number)}"] = ["python", *argv[1:]]
    found = {
        name: service["command"]
        for name, service in compose["services"].items()
        if name.startswith("worker-")
    }
    assert found == expected


def test_web_is_published_on_loopback_only_by_default(compose):
    (port,) = compose["services"]["web"]["ports"]
    published = port if isinstance(port, str) else f"{port['host_ip']}:{port['published']}"
    assert published.startswith("127.0.0.1:8000")


def test_migrations_run_once_before_everything_that_uses_the_database(compose):
    services = compose["services"]
    migrate = services["migrate"]
    assert migrate["restart"] == "no"
    assert "manage.py migrate" in " ".join(migrate["command"])
    for name, service in services.items():
        if service.get("image") == "teachlab:local" and name != "migrate":
            condition = service["depends_on"]["migrate"]["condition"]
            assert condition == "service_completed_successfully", name


def test_postgres_keeps_its_data_in_a_volume_and_the_app_uses_it(compose):
    services = compose["services"]
    volumes = services["postgres"]["volumes"]
    assert any("/var/lib/postgresql/data" in str(v) for v in volumes)
    url = services["web"]["environment"]["DATABASE_URL"]
    assert url == "postgres://teachlab:pg-secret@postgres:5432/teachlab"


def test_rabbitmq_credentials_come_from_the_environment(compose):
    services = compose["services"]
    assert services["rabbitmq"]["environment"]["RABBITMQ_DEFAULT_PASS"] == "rabbit-secret"
    assert "rabbit-secret@rabbitmq" in services["web"]["environment"]["TEACHLAB_RABBIT_URL"]
    assert "guest" not in COMPOSE_FILE.read_text()


def test_compose_runs_production_mode_with_controls_for_staff(compose):
    env = compose["services"]["web"]["environment"]
    assert env["TEACHLAB_DEBUG"] == "0"
    assert env["TEACHLAB_LOCAL_CONTROLS"] == "0"
    assert env["TEACHLAB_SSL_REDIRECT"] == "1"


def test_the_image_runs_as_a_non_root_user_with_a_healthcheck_on_healthz():
    dockerfile = (BASE_DIR / "Dockerfile").read_text()
    users = re.findall(r"^USER (\S+)", dockerfile, re.M)
    assert users and users[-1] not in {"root", "0"}
    assert re.search(r"^HEALTHCHECK .*\n?.*/healthz", dockerfile, re.M)
    installs = re.findall(r"pip install[^\n]*", dockerfile)
    assert installs == ["pip install --no-cache-dir -r requirements.txt \\"]


def test_runtime_requirements_hold_no_test_tools():
    runtime = (BASE_DIR / "requirements.txt").read_text().lower()
    dev = (BASE_DIR / "requirements-dev.txt").read_text().lower()
    for tool in ("pytest", "ruff", "playwright", "hypothesis", "mutmut"):
        assert f"\n{tool}" not in runtime and f"\n{tool}" in dev, tool
    assert "-r requirements.txt" in dev
    assert re.search(r"^django==5\.2\.\d+$", runtime, re.M)


def _ignored_by(patterns_file: str, name: str) -> bool:
    """Whether a line of .dockerignore/.gitignore matches `name` at the top of the tree."""
    lines = (BASE_DIR / patterns_file).read_text().splitlines()
    patterns = [p.strip().lstrip("/") for p in lines if p.strip() and not p.startswith("#")]
    return any(fnmatch.fnmatch(name, p) for p in patterns)


def test_the_env_file_of_secrets_is_kept_out_of_the_image_and_the_repository():
    assert _ignored_by(".dockerignore", ".env")
    assert _ignored_by(".gitignore", ".env")
    if (BASE_DIR / ".git").exists():
        done = subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=BASE_DIR, check=False)
        assert done.returncode == 0, "git would add .env"


def test_forwarded_headers_are_believed_only_from_a_configured_proxy(compose):
    dockerfile = (BASE_DIR / "Dockerfile").read_text().splitlines()
    instructions = [line for line in dockerfile if not line.lstrip().startswith("#")]
    assert not [i for i in instructions if "FORWARDED_ALLOW_IPS" in i]  # left to serve, compose
    serve = (BASE_DIR / "scripts" / "serve").read_text()
    assert '--forwarded-allow-ips "${TEACHLAB_FORWARDED_ALLOW_IPS:-127.0.0.1}"' in serve
    env = compose["services"]["web"]["environment"]
    assert env["TEACHLAB_FORWARDED_ALLOW_IPS"] == "127.0.0.1"
    done = compose_config(**NEEDED, TEACHLAB_FORWARDED_ALLOW_IPS="172.18.0.1")
    web = yaml.safe_load(done.stdout)["services"]["web"]["environment"]
    assert web["TEACHLAB_FORWARDED_ALLOW_IPS"] == "172.18.0.1"


def test_the_noeviction_lane_gets_a_server_of_its_own_with_the_lanes_memory_options():
    from teachlab.lab.runs.lanetable import NOEVICTION_SERVER_ARGS

    services = yaml.safe_load(COMPOSE_FILE.read_text())["services"]
    command = services["redis-noeviction"]["command"]
    assert command[0] == "redis-server"
    assert command[-len(NOEVICTION_SERVER_ARGS) :] == NOEVICTION_SERVER_ARGS
    url = services["web"]["environment"]["TEACHLAB_LAB_NOEVICTION_REDIS_URL"]
    assert url == "redis://redis-noeviction:6379"

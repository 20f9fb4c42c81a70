"""One worker virtualenv per Celery/kombu pair, made from the pair's lock file in locks/
(written by locks.py).

The lab's worker imports Django and the project (`teachlab.lab.worker.celery_app` calls
django.setup()), so a lock holds the whole runtime with only the Celery stack changed. A
virtualenv is built under var/matrix/ once and reused while its lock file is unchanged; pip's
downloads are kept there too, so a rebuild needs no network.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from django.conf import settings

from teachlab.lab.matrix.locks import LOCKS

BUILT = "lock.sha256"  # written last: a virtualenv without it is half-built and made again


class EnvFailed(RuntimeError):
    """A worker environment could not be built; the message says why."""


def matrix_dir() -> Path:
    return Path(settings.BASE_DIR) / "var" / "matrix"


def celery_series() -> list[str]:
    """The Celery release series that have a lock file ("5.5", "5.7", …)."""
    return sorted(p.stem.removeprefix("celery-") for p in LOCKS.glob("celery-*.txt"))


def lock_path(series: str) -> Path:
    path = LOCKS / f"celery-{series}.txt"
    if not path.exists():
        known = ", ".join(celery_series())
        raise EnvFailed(f"no lock file for Celery {series} (there are: {known})")
    return path


def lock_pins(series: str) -> dict[str, str]:
    """{"celery": "5.5.3", …} as the lock file pins them, names normalised (PEP 503)."""
    pins = {}
    for line in lock_path(series).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[re.sub(r"[-_.]+", "-", name.strip().lower())] = version.strip()
    return pins


def env_python(series: str) -> Path:
    return matrix_dir() / f"celery-{series}" / "bin" / "python"


def env_ready(series: str) -> bool:
    marker = matrix_dir() / f"celery-{series}" / BUILT
    digest = hashlib.sha256(lock_path(series).read_bytes()).hexdigest()
    return marker.exists() and marker.read_text().strip() == digest


def env_build(series: str, *, say=print) -> Path:
    """The pair's virtualenv python, built when missing or made from an older lock file."""
    lock = lock_path(series)
    if env_ready(series):
        return env_python(series)
    home = matrix_dir() / f"celery-{series}"
    shutil.rmtree(home, ignore_errors=True)
    home.parent.mkdir(parents=True, exist_ok=True)
    say(f"building the Celery {series} worker environment in {home} (once)")
    pip_env = {**os.environ, "PIP_CACHE_DIR": str(matrix_dir() / "pip-cache")}
    for argv in (
        [sys.executable, "-m", "venv", str(home)],
        [str(home / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
         "--disable-pip-version-check", "--only-binary=:all:", "-r", str(lock)],
    ):  # fmt: skip
        done = subprocess.run(argv, capture_output=True, text=True, env=pip_env, check=False)
        if done.returncode != 0:
            shutil.rmtree(home, ignore_errors=True)
            raise EnvFailed(f"{' '.join(argv[:4])} failed: {(done.stderr or done.stdout)[-800:]}")
    (home / BUILT).write_text(hashlib.sha256(lock.read_bytes()).hexdigest())
    return env_python(series)

"""The web server's start (teachlab/asgi.py): what it loaded is kept out of the garbage
collector's full passes, and threads hand the GIL back to the event loop quickly; a process
that merely imports the application (a test) is left as it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import gc, sys
if sys.argv[1] == "server":
    import uvicorn
import teachlab.asgi
frozen = gc.get_freeze_count()
loaded = "teachlab.lab.web.views" in sys.modules and "teachlab.workshop.views" in sys.modules
print(frozen, len(gc.get_objects()), loaded, sys.getswitchinterval())
"""


def _probe(kind: str) -> tuple[int, int, str, float]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "teachlab.settings"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, kind], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120, check=True,
    ).stdout.split()  # fmt: skip
    return int(out[0]), int(out[1]), out[2], float(out[3])


def test_the_web_server_loads_its_views_and_freezes_them_out_of_full_collections():
    frozen, tracked, loaded, interval = _probe("server")
    assert loaded == "True"  # every view imported before the freeze, not on first request
    assert frozen > 50_000 and tracked < frozen / 10, (frozen, tracked)
    assert interval == 0.001


def test_a_process_that_only_imports_the_application_is_left_alone():
    frozen, _tracked, _loaded, interval = _probe("plain")
    assert frozen == 0
    assert interval == 0.005

"""The web process's start (teachlab/asgi.py): what it loaded is kept out of the garbage
collector's full passes, and threads hand the GIL back to the event loop quickly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import gc, sys
import teachlab.asgi
frozen = gc.get_freeze_count()
loaded = "teachlab.lab.views" in sys.modules and "teachlab.workshop.views" in sys.modules
print(frozen, len(gc.get_objects()), loaded, sys.getswitchinterval())
"""


def test_the_web_process_loads_its_views_and_freezes_them_out_of_full_collections():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "teachlab.settings"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120, check=True,
    ).stdout.split()  # fmt: skip
    frozen, tracked, loaded, interval = int(out[0]), int(out[1]), out[2], float(out[3])
    assert loaded == "True"  # every view imported before the freeze, not on first request
    assert frozen > 50_000 and tracked < frozen / 10, (frozen, tracked)
    assert interval == 0.001

"""Every line the app logs carries its time and logger: a server's log is read after the fact
("when did the 503s start?", docs/measurements/history/soak.md)."""

from __future__ import annotations

import logging
import re


def test_a_logged_line_starts_with_its_time_level_and_logger(settings):
    console = settings.LOGGING["handlers"]["console"]
    fmt = settings.LOGGING["formatters"][console["formatter"]]["format"]
    record = logging.LogRecord(
        "teachlab.core.dbasync", logging.WARNING, __file__, 1, "busy", (), None
    )
    line = logging.Formatter(fmt).format(record)
    assert re.match(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} WARNING teachlab\.core\.dbasync: busy$", line
    )

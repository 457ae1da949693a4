"""``pylogging``: SGLang's output re-logged by a Python program with logging's default format.

Format (``%(asctime)s - %(name)s - %(levelname)s - %(message)s``)::

    2025-03-07 23:50:27,531 - launcher - INFO - [2025-03-07 23:50:27] server_args=ServerArgs(...)
    2025-03-07 23:50:40,002 - launcher - INFO - [2025-03-07 23:50:40 TP0] KV Cache is allocated. ...
    2025-03-07 23:50:41,250 - launcher - WARNING - child exited with status 0

Record fields: ``ts`` (the wrapper's local time read as UTC, with a note; an outer time
wins); ``fmt="pylogging"``.
"""

from __future__ import annotations

import re

from logparse.sources.layers import Layers
from logparse.sources.timestamps import bad_time_note, stamp_epoch

FORMATS = ("pylogging",)
ALIASES: dict[str, str] = {}

NOTE_PYLOG_TIME = "time from the Python logging wrapper (local time read as UTC)"

PYLOG_RE = re.compile(
    rb"(?P<date>\d{4}-\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d),(?P<ms>\d{3}) - (?P<name>[^ ]+) - "
    rb"(?P<level>[A-Z]+|Level \d+) - "
)


def _printed(m: re.Match) -> str:
    return m.string[m.start() : m.end("ms")].decode()


def peel(line: Layers) -> bool:
    m = PYLOG_RE.match(line.raw, line.pos)
    if m is None:
        return False
    if line.ts is None:
        line.ts = stamp_epoch(m.group("date"), m.group("hms"), b"." + m.group("ms"))
        line.notes.append(NOTE_PYLOG_TIME if line.ts is not None else bad_time_note(_printed(m)))
    line.fmt = line.fmt or "pylogging"
    line.pos = m.end()
    return True

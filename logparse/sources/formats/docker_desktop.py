"""``docker-desktop``: lines copied out of Docker Desktop's log view (local time, no zone).

Format::

    2026-09-22 08:49:56 [2026-09-22 06:49:56] server_args=ServerArgs(...)
    2026-09-22 08:50:02.125 [2026-09-22 06:50:02 TP0] Load weight begin. avail mem=78.62 GB

Record fields: ``ts`` (the local time read as UTC, with a note saying so: the zone of the
machine that showed it is unknown); ``fmt="docker-desktop"``.
"""

from __future__ import annotations

import re

from logparse.sources.layers import Layers
from logparse.sources.timestamps import bad_time_note, stamp_epoch

FORMATS = ("docker-desktop",)
ALIASES: dict[str, str] = {}

NOTE_DESKTOP = "Docker Desktop local time read as UTC"

DESKTOP_RE = re.compile(rb"(?P<date>\d{4}-\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{1,9})?[ \t]")


def peel(line: Layers) -> bool:
    m = DESKTOP_RE.match(line.raw, line.pos)
    if m is None:
        return False
    if line.ts is None:
        line.ts = stamp_epoch(m.group("date"), m.group("hms"), m.group("frac"))
        when = m.string[m.start() : m.end() - 1].decode()
        line.notes.append(NOTE_DESKTOP if line.ts is not None else bad_time_note(when))
    line.fmt = line.fmt or "docker-desktop"
    line.pos = m.end()
    return True

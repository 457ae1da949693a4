"""``journal-short-iso``, ``journal-short-iso-precise``: ``journalctl -o short-iso(-precise)``.

Format (the offset is ``+0000`` before systemd 255, ``+00:00`` from 255 on)::

    2026-11-29T08:08:05+0000 gpu-node-1 python3[4669]: [2026-11-29 08:08:05] server_args=...
    2026-11-29T09:08:06+01:00 gpu-node-1 python3[4669]: [2026-11-29 08:08:06 TP0] Load weight begin. ...
    2026-11-29T08:08:07.123456+0000 gpu-node-1 python3[4669]: [2026-11-29 08:08:07 TP0] Memory pool end. ...

Record fields: ``ts`` (epoch seconds UTC, the offset applied), ``host``, ``unit`` (as in
:mod:`.journal_short`), ``pid``, ``boot``; ``fmt`` is ``journal-short-iso-precise`` with
microseconds.

``2026-09-22T06:49:56.3Z INFO:  x`` is docker's ``--timestamps`` shape: a ``Z`` time whose
"ident" has no ``[pid]`` is taken as journald's only when the input is a journal rendering.
"""

from __future__ import annotations

import re

from logparse.sources.formats.journal_short import TAIL
from logparse.sources.timestamps import bad_time_note, offset_seconds, stamp_epoch

FORMATS = ("journal-short-iso", "journal-short-iso-precise")
ALIASES = {"short-iso": "journal-short-iso", "short-iso-precise": "journal-short-iso-precise"}

HEADER_RE = re.compile(
    rb"(?P<date>\d{4}-\d\d-\d\d)T(?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{1,9})?(?P<tz>Z|[+-]\d\d:?\d\d)" + TAIL
)


def match(raw: bytes, pos: int, journal: bool, compose: bool) -> re.Match | None:
    m = HEADER_RE.match(raw, pos)
    if m is not None and m.group("tz") == b"Z" and not journal and m.group("pid") is None:
        return None  # docker --timestamps
    return m


def header_time(m: re.Match, primary: str, ident: str) -> tuple:
    date, hms, frac, tz = m.group("date", "hms", "frac", "tz")
    ts = stamp_epoch(date, hms, frac, offset_seconds(tz))
    note = None if ts is not None else bad_time_note(m.group(0)[: m.end("tz") - m.start()].decode())
    return ts, "journal-short-iso-precise" if frac else "journal-short-iso", note

"""``journal-short-full``, ``journal-with-unit``: ``journalctl -o short-full`` / ``-o with-unit``.

Format (weekday, date, time and zone abbreviation; ``with-unit`` shows the unit where
the others show the identifier)::

    Sun 2026-11-29 08:08:07 UTC gpu-node-1 python3[4669]: [2026-11-29 08:08:07] server_args=...
    Sun 2026-11-29 09:08:08 CET gpu-node-1 python3[4669]: [2026-11-29 08:08:08 TP0] Load weight begin. ...
    Sun 2026-11-29 08:08:09 UTC gpu-node-1 sglang.service[4669]: [2026-11-29 08:08:09 TP0] Memory pool end. ...

Record fields: ``ts`` (epoch seconds UTC; a zone abbreviation that is not unambiguous is
read as UTC, with a note), ``host``, ``unit`` (``with-unit``: the unit itself), ``pid``,
``boot``.  ``fmt``: the named format when one was given, else ``journal-with-unit`` when
the identifier is a unit name.
"""

from __future__ import annotations

import re

from logparse.sources.formats.journal_short import TAIL
from logparse.sources.formats.systemd_units import UNIT_SUFFIXES
from logparse.sources.timestamps import bad_time_note, stamp_epoch, zone_offset

FORMATS = ("journal-short-full", "journal-with-unit")
ALIASES = {"short-full": "journal-short-full", "with-unit": "journal-with-unit"}

HEADER_RE = re.compile(
    rb"(?P<wd>[A-Z][a-z]{2}) (?P<date>\d{4}-\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{1,9})?"
    rb" (?P<tz>[A-Za-z][A-Za-z0-9/_+-]*|[+-]\d{2,4})" + TAIL
)


def match(raw: bytes, pos: int, journal: bool, compose: bool) -> re.Match | None:
    return HEADER_RE.match(raw, pos)


def header_time(m: re.Match, primary: str, ident: str) -> tuple:
    tz = m.group("tz")
    off = zone_offset(tz)
    note = None
    if off is None:
        off = 0
        note = f"time zone {tz.decode('utf-8', 'replace')!r} unknown: read as UTC"
    ts = stamp_epoch(m.group("date"), m.group("hms"), m.group("frac"), off)
    if ts is None:
        note = bad_time_note(m.string[m.start() : m.end("tz")].decode("utf-8", "replace"))
    if primary in FORMATS:
        fmt = primary
    else:
        fmt = "journal-with-unit" if ident.endswith(UNIT_SUFFIXES) else "journal-short-full"
    return ts, fmt, note

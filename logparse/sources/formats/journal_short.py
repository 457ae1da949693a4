"""``journal-short``, ``journal-short-precise``: ``journalctl -o short`` / ``-o short-precise``.

Format (``--no-hostname`` drops the host; the month follows LC_TIME)::

    Nov 29 08:08:05 gpu-node-1 python3[4669]: [2026-11-29 08:08:05] server_args=ServerArgs(...)
    Nov 29 08:08:05.123456 gpu-node-1 python3[4669]: [2026-11-29 08:08:05 TP0] Init torch distributed begin.
    Nov 29 08:08:04 gpu-node-1 systemd[1]: Started sglang.service - SGLang server.
    Dez 29 08:08:13 gpu-node-1 python3[4669]: [2026-12-29 08:08:13] Memory pool end. avail mem=9.12 GB

Record fields: ``ts`` (no year: it is completed from SGLang's own stamp, else from the
file's time, see :mod:`logparse.sources.years`), ``host``, ``unit`` (the identifier,
``python3``, or the unit systemd just started: :mod:`.systemd_units`), ``pid``, ``boot``
(the last ``-- Boot <id> --`` marker, :mod:`.journal_cat`); ``fmt`` is
``journal-short-precise`` when the time has microseconds.

Every short* mode ends its header in ``host ident[pid]: ``: :data:`TAIL`, shared by the
other ``journal_short_*`` modules.
"""

from __future__ import annotations

import re

from logparse.sources.timestamps import bad_time_note, civil_epoch, frac_seconds, hms_seconds, month_number

FORMATS = ("journal-short", "journal-short-precise")
ALIASES = {"short": "journal-short", "short-precise": "journal-short-precise"}

#: ``host ident[pid]: `` after any journald short* time.  The host is optional
#: (``--no-hostname``): the lazy ``??`` first tries "no host", which only succeeds when
#: the first token is directly followed by ``[pid]:`` or ``:`` -- a hostname never is.
TAIL = rb" (?:(?P<host>[^\s\[\]]+) )??(?P<ident>[^\s\[]+?)(?:\[(?P<pid>\d+)\])?:(?: |$)"

_TIME = rb" (?P<day>[ \d]\d) (?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{1,6})?"
HEADER_RE = re.compile(rb"(?P<mon>[A-Z][a-z]{2})" + _TIME + TAIL)
#: The same with a non-English month name (LC_TIME of the machine that rendered it).
LOCALE_HEADER_RE = re.compile(rb"(?P<mon>[^\s\d:\[\](){}|]{2,16})" + _TIME + TAIL)


#: A year with a Feb 29: a month and day are checked before their year is known (sources.years
#: checks Feb 29 again once it is).
LEAP_YEAR = 2000


def match(raw: bytes, pos: int, journal: bool, compose: bool) -> re.Match | None:
    c = raw[pos : pos + 1]
    if c.isupper():
        m = HEADER_RE.match(raw, pos)
        if m is None and raw[pos + 1 : pos + 2].islower():
            m = LOCALE_HEADER_RE.match(raw, pos)
        return m
    if c and (c[0] >= 0x80 or c.islower()) and not compose:  # "name  | " is compose's
        return LOCALE_HEADER_RE.match(raw, pos)
    return None


def header_time(m: re.Match, primary: str, ident: str) -> tuple:
    """(``(month, day, seconds)`` or None, format name, note or None)."""
    fmt = "journal-short-precise" if m.group("frac") else "journal-short"
    mon = month_number(m.group("mon"))
    if mon is None:
        name = m.group("mon").decode("utf-8", "replace")
        return None, fmt, f"month name {name!r} not understood: no timestamp (render with LC_ALL=C)"
    day, sod = int(m.group("day")), hms_seconds(m.group("hms"))
    if sod is None or civil_epoch(LEAP_YEAR, mon, day) is None:  # Nov 31, Feb 30, 25:00:00
        return None, fmt, bad_time_note(m.string[m.start() : m.end("hms")].decode("utf-8", "replace"))
    return (mon, day, sod + frac_seconds(m.group("frac"))), fmt, None

"""The journald ``short*`` header, whichever time it starts with.

``WHEN host ident[pid]: message`` where WHEN is one of five styles, each read by its own
module: :mod:`.journal_short` (``Nov 29 08:08:05``), :mod:`.journal_short_iso`
(``2026-11-29T08:08:05+0000``), :mod:`.journal_short_full` (``Sun 2026-11-29 08:08:05 UTC``),
:mod:`.journal_short_unix` (``1795939685.000000``), :mod:`.journal_short_monotonic`
(``[    5.000000]``).  :func:`match` picks the style from the first bytes, so that a line
costs one regexp whatever the mix of formats; :class:`HeaderReader` turns a match into a
:class:`Header`, cached by its bytes (the same second of the same process repeats line
after line).
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import NamedTuple

from logparse.sources.formats import (
    journal_short,
    journal_short_full,
    journal_short_iso,
    journal_short_monotonic,
    journal_short_unix,
)


class Header(NamedTuple):
    host: str | None
    ident: str
    pid: int | None
    #: epoch seconds, ``(month, day, seconds)`` when the year is missing, or None
    ts: float | tuple | None
    #: the format name this header shows (journal-short-precise, journal-with-unit, ...)
    fmt: str
    #: a note about the time (unknown zone or month name), or None
    note: str | None
    #: the time as printed (for messages)
    when: str


#: The header style of each short* format (the style tried first on every line).
STYLE_OF: dict[str, ModuleType] = {
    name: module
    for module in (journal_short, journal_short_iso, journal_short_full, journal_short_unix, journal_short_monotonic)
    for name in module.FORMATS
}


def match(raw: bytes, pos: int, journal: bool, compose: bool) -> tuple[re.Match, ModuleType] | None:
    """A short* header at ``pos`` and its style module.  ``journal``: the input is a journal
    rendering (decides docker vs short-iso); ``compose``: a compose log (decides locale months)."""
    c = raw[pos : pos + 1]
    style: ModuleType
    if c.isdigit():
        if raw[pos + 4 : pos + 5] == b"-" and raw[pos + 10 : pos + 11] == b"T":
            style = journal_short_iso
        elif raw[pos + 10 : pos + 11] == b"." and raw[pos : pos + 10].isdigit():
            style = journal_short_unix
        else:
            return None
    elif c.isupper():
        full = raw[pos + 4 : pos + 5].isdigit() and raw[pos + 8 : pos + 9] == b"-"
        style = journal_short_full if full else journal_short
    elif c == b"[":
        c1 = raw[pos + 1 : pos + 2]
        if not ((c1 == b" " or c1.isdigit()) and raw[pos + 5 : pos + 6] != b"-"):
            return None
        style = journal_short_monotonic
    elif c and (c[0] >= 0x80 or c.islower()):
        style = journal_short  # a month name in another language
    else:
        return None
    m = style.match(raw, pos, journal, compose)
    return None if m is None else (m, style)


class HeaderReader:
    """Reads matched headers into :class:`Header`, with a bounded cache."""

    def __init__(self, primary: str) -> None:
        self.primary = primary
        self._cache: dict[bytes, Header] = {}

    def read(self, m: re.Match, style: ModuleType) -> Header:
        key = m.string[m.start() : m.end()]
        h = self._cache.get(key)
        if h is None:
            h = self._read(m, style)
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = h
        return h

    def _read(self, m: re.Match, style: ModuleType) -> Header:
        host_b, ident_b, pid_b = m.group("host", "ident", "pid")
        host = host_b.decode("utf-8", "replace") if host_b is not None else None
        ident = ident_b.decode("utf-8", "replace")
        pid = int(pid_b) if pid_b is not None else None
        when = m.string[m.start() : m.start("host") if host_b is not None else m.start("ident")]
        ts, fmt, note = style.header_time(m, self.primary, ident)
        return Header(host, ident, pid, ts, fmt, note, when.strip().decode("utf-8", "replace"))

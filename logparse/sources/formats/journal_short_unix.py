"""``journal-short-unix``: ``journalctl -o short-unix``.

Format (seconds since the epoch, microseconds)::

    1795939689.500000 gpu-node-1 python3[4669]: [2026-11-29 08:08:09] server_args=ServerArgs(...)
    1795939690.000000 gpu-node-1 python3[4669]: [2026-11-29 08:08:10 TP0] Load weight begin. ...

Record fields: ``ts``, ``host``, ``unit`` (as in :mod:`.journal_short`), ``pid``, ``boot``.
"""

from __future__ import annotations

import re

from logparse.sources.formats.journal_short import TAIL

FORMATS = ("journal-short-unix",)
ALIASES = {"short-unix": "journal-short-unix"}

HEADER_RE = re.compile(rb"(?P<unix>\d{9,11}\.\d{6})" + TAIL)


def match(raw: bytes, pos: int, journal: bool, compose: bool) -> re.Match | None:
    return HEADER_RE.match(raw, pos)


def header_time(m: re.Match, primary: str, ident: str) -> tuple:
    return float(m.group("unix")), "journal-short-unix", None

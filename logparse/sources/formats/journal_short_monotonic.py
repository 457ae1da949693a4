"""``journal-short-monotonic``, ``journal-short-delta``: ``journalctl -o short-monotonic`` / ``-o short-delta``.

Format (seconds since boot; ``delta`` adds the time since the previous entry)::

    [   95.000000] gpu-node-1 python3[4669]: [2026-11-29 08:08:10] server_args=ServerArgs(...)
    [   96.000000 <    1.000000>] gpu-node-1 python3[4669]: [2026-11-29 08:08:11 TP0] Load weight begin. ...

Record fields: ``host``, ``unit`` (as in :mod:`.journal_short`), ``pid``, ``boot``;
``ts=None``: there is no wall clock (events keep SGLang's own stamps).
"""

from __future__ import annotations

import re

from logparse.sources.formats.journal_short import TAIL

FORMATS = ("journal-short-monotonic", "journal-short-delta")
ALIASES = {"short-monotonic": "journal-short-monotonic", "short-delta": "journal-short-delta"}

HEADER_RE = re.compile(rb"\[ *(?P<mono>\d+\.\d{6})(?P<delta> <[ \d.]+\*?>)?\]" + TAIL)


def match(raw: bytes, pos: int, journal: bool, compose: bool) -> re.Match | None:
    return HEADER_RE.match(raw, pos)


def header_time(m: re.Match, primary: str, ident: str) -> tuple:
    return None, "journal-short-delta" if m.group("delta") else "journal-short-monotonic", None

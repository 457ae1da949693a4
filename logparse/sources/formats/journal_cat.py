"""``journal-cat``: ``journalctl -o cat``, and the marker lines of every journalctl text rendering.

Format (``-o cat`` prints each MESSAGE alone; journalctl adds its own lines)::

    -- Logs begin at Thu 2026-11-26 17:44:42 UTC, end at Sun 2026-11-29 09:00:00 UTC. --
    -- Boot 0d7350dbe429f0ee884905998968980f --
    [2026-11-29 08:08:05] server_args=ServerArgs(model_path='/models/m', ...)
    -- Reboot --
    -- No entries --
    Hint: You are currently not seeing messages from other users and the system.
          Users in groups 'adm', 'systemd-journal' can see all messages.

Record fields of a message line: ``text`` only, ``fmt="journal-cat"`` (no process
identity: ``-o cat`` shows none).  A marker is a ``marker=True`` record whose text is the
line; the boot markers set ``boot`` for the records after them (``-- Boot <id> --``: the
id; old-style ``-- Reboot --``: ``reboot-N``).  ``-- cursor: ...`` (``--show-cursor``)
gives its cursor.  In a plain input only the unmistakable markers count (a plain log may
well print ``-- a note --``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

FORMATS = ("journal-cat",)
ALIASES = {"cat": "journal-cat"}

#: The first bytes a marker line can start with (a cheap test before :func:`marker`).
FIRST_BYTES = frozenset({b"-", b"H", b"W", b"\xe2"})

_HEX32 = re.compile(rb"[0-9a-f]{32}")
_HEADERS = (b"-- Logs begin at ", b"-- Journal begins at ", b"-- No entries --")


class Marker(NamedTuple):
    #: boot | reboot | hint | cursor | other
    kind: str
    #: the boot id of a boot marker; the cursor of a cursor marker
    value: str | None = None


def marker(raw: bytes, journal: bool) -> Marker | None:
    """The journalctl line ``raw`` is, or None.  ``journal``: the input is a journal rendering."""
    c = raw[:1]
    if c == b"-":
        return _dash_marker(raw, journal)
    if c == b"H":
        if raw.startswith(b"Hint: ") and (journal or raw.startswith(b"Hint: You are currently not seeing messages")):
            return Marker("hint")
    elif c == b"W":
        if journal and raw.startswith(b"Warning: journal has been rotated"):
            return Marker("other")
    elif c == b"\xe2" and journal and raw.startswith("░░".encode()):  # catalog text (-x)
        return Marker("other")
    return None


def _dash_marker(raw: bytes, journal: bool) -> Marker | None:
    if raw.startswith(b"-- "):
        if raw.endswith(b" --"):
            if raw.startswith(b"-- Boot ") and _HEX32.fullmatch(raw[8:-3]):
                return Marker("boot", raw[8:-3].decode())
            if raw == b"-- Reboot --":
                return Marker("reboot")
            if raw.startswith(_HEADERS):
                return Marker("other")
        if raw.startswith(b"-- cursor: "):
            return Marker("cursor", raw[11:].decode("utf-8", "replace").strip())
        if journal:  # catalog text (-x, old style) and any other "-- ... --" line
            return Marker("other")
    elif raw == b"--" and journal:
        return Marker("other")
    return None


def is_hint_continuation(raw: bytes) -> bool:
    """The indented lines after ``Hint: ...``."""
    return raw.startswith(b"      ")

"""``journal-json``, ``-json-seq``, ``-json-sse``, ``-json-pretty``: ``journalctl -o json*``.

Format (one object per line; ``json-seq`` puts an RS byte before it, ``json-sse`` a
``data: ``; ``json-pretty`` spreads it over several lines)::

    {"__CURSOR":"s=1e7a;i=3","__REALTIME_TIMESTAMP":"1795939685000000","_BOOT_ID":"0d73...",
     "_HOSTNAME":"gpu-node-1","_SYSTEMD_UNIT":"sglang.service","_PID":"4669",
     "MESSAGE":"[2026-11-29 08:08:05] server_args=ServerArgs(...)"}
    \\x1e{"MESSAGE":[91,50,48,...],"_PID":"4669", ...}
    data: {"MESSAGE":null,"_PID":"4669", ...}

Record fields: as :mod:`.journal_entry` says (``ts``, ``host``, ``unit``, ``pid``, ``boot``,
``cursor``); ``line_no`` is the line where the object starts.  MESSAGE may be a string, a
byte array (invalid UTF-8 or control characters, printed with ``--all``), a list of
either (a field given twice) or ``null`` (lost: a problem).  A line that is not valid
JSON is read as plain text, with a warning; an object left open at the end of the input
(or larger than :data:`MAX_PENDING_BYTES`) is given back as its lines.
"""

from __future__ import annotations

import json
import re

from logparse.sources.formats.journal_entry import META_KEYS
from logparse.text import valid_text

FORMATS = ("journal-json", "journal-json-seq", "journal-json-sse", "journal-json-pretty")
ALIASES = {
    "json": "journal-json",
    "json-seq": "journal-json-seq",
    "json-sse": "journal-json-sse",
    "json-pretty": "journal-json-pretty",
}

#: A json-pretty object larger than this is read as text (memory bound).
MAX_PENDING_BYTES = 64 << 20

_JSON_STRING_RE = re.compile(rb'"(?:[^"\\\n]|\\.)*"')
_MISSING = object()


def starts_object(raw: bytes) -> bool:
    """Whether a line opens a JSON rendering's object (any of the four framings)."""
    c = raw[:1]
    return c == b"{" or c == b"\x1e" or (c == b"d" and raw.startswith(b"data: {"))


def unwrap(raw: bytes, primary: str) -> tuple[bytes, str]:
    """(the JSON text, the format its framing shows)."""
    if raw[:1] == b"\x1e":
        return raw.lstrip(b"\x1e"), "journal-json-seq"
    if raw.startswith(b"data: "):
        return raw[6:], "journal-json-sse"
    return raw, "journal-json-pretty" if primary == "journal-json-pretty" else "journal-json"


def loads(text: bytes):
    try:
        obj = json.loads(text)
        if b"\\ud" in text or b"\\uD" in text:  # a \udXXX escape may name a lone surrogate
            return _valid(obj)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python reads
        return None
    return obj


def _valid(value):
    """The decoded object with each lone surrogate (JSON's ``"\\ud800"``: not text) as its escape,
    as :mod:`logparse.text` says of every string that enters."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        return [_valid(v) for v in value]
    if isinstance(value, dict):
        return {valid_text(k): _valid(v) for k, v in value.items()}
    return value


def brace_depth(line: bytes) -> int:
    """Net ``{`` minus ``}`` of a line of JSON, outside strings."""
    if b'"' in line:
        line = _JSON_STRING_RE.sub(b"", line)
    return line.count(b"{") - line.count(b"}")


class PendingObject:
    """A JSON object spread over several lines (json-pretty), collected until its braces
    balance (braces inside strings do not count; a JSON string never spans lines)."""

    def __init__(self, n: int, raw: bytes, text: bytes, depth: int, fmt: str) -> None:
        self.start = n
        self.lines = [raw]  # as read, for giving them back as text
        self._text = [text]  # without the framing
        self.size = len(raw)
        self.depth = depth
        self.fmt = "journal-json-pretty" if fmt == "journal-json" else fmt

    def add(self, raw: bytes) -> bool:
        """One more line; True when the object is complete."""
        self.lines.append(raw)
        self._text.append(raw)
        self.size += len(raw) + 1
        self.depth += brace_depth(raw)
        return self.depth <= 0

    @property
    def too_big(self) -> bool:
        return self.size > MAX_PENDING_BYTES

    def value(self):
        return loads(b"\n".join(self._text))


def _field_str(v) -> str | None:
    """A journal JSON value as a string: str, [byte values], or [values] (take the first)."""
    if v is None or v.__class__ is str:
        return v
    if isinstance(v, list) and v:
        if all(isinstance(x, int) for x in v):
            try:
                return bytes(v).decode("utf-8", "replace")
            except ValueError:
                return None
        return _field_str(v[0])
    return str(v)


def entry_fields(obj: dict) -> dict:
    """The metadata fields :mod:`.journal_entry` reads, as strings."""
    get = obj.get
    return {k: _field_str(get(k)) for k in META_KEYS if k in obj}


def message_values(obj: dict) -> list:
    """MESSAGE as a list of str / bytes / None (not printed)."""
    msg = obj.get("MESSAGE", _MISSING)
    if msg is _MISSING:
        return []
    if msg is None or msg.__class__ is str:
        return [msg]
    if isinstance(msg, list) and msg and all(isinstance(x, int) for x in msg):
        try:
            return [bytes(msg)]
        except ValueError:
            return [None]
    if isinstance(msg, list):
        return [_one_value(v) for v in msg]
    return [str(msg)]


def _one_value(v):
    """One of several MESSAGE values."""
    if v is None or v.__class__ is str:
        return v
    if isinstance(v, list):
        try:
            return bytes(v)
        except (ValueError, TypeError):
            return None
    return str(v)

"""``journal-verbose``: ``journalctl -o verbose``.

Format (a header line with the cursor, then every field indented by four spaces; a
multi-line value continues indented to its ``=``)::

    Sun 2026-11-29 08:08:05.000000 UTC [s=1e7a...;i=3;b=0d7350dbe429f0ee884905998968980f;m=5f5e100;t=6452b1b4d1c40;x=9a1b]
        _BOOT_ID=0d7350dbe429f0ee884905998968980f
        _HOSTNAME=gpu-node-1
        _SYSTEMD_UNIT=sglang.service
        _PID=4669
        MESSAGE=[2026-11-29 08:08:05] server_args=ServerArgs(...)

Record fields: as :mod:`.journal_entry` says; the time and boot come from the cursor's
``t=`` and ``b=`` (else from the header's time and zone).  ``MESSAGE=[NNNB blob data]``
(control characters or invalid UTF-8 without ``--all``) is a lost message, a problem.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator

from logparse.sources.formats.journal_entry import BLOB_RE, META_KEYS_BYTES, Blob
from logparse.sources.formats.journal_export import is_field_name
from logparse.sources.records import Record
from logparse.sources.timestamps import stamp_epoch, zone_offset

FORMATS = ("journal-verbose",)
ALIASES = {"verbose": "journal-verbose"}

VERBOSE_HDR_RE = re.compile(
    rb"(?P<wd>[A-Z][a-z]{2}) (?P<date>\d{4}-\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{1,9})?"
    rb" (?P<tz>\S+) \[(?P<cursor>s=[^\]]*)\]$"
)


def header_fields(m: re.Match) -> dict[str, str]:
    """The fields a header line gives: ``__CURSOR``, ``__REALTIME_TIMESTAMP``, ``_BOOT_ID``."""
    cursor = m.group("cursor").decode("utf-8", "replace")
    fields = {"__CURSOR": cursor}
    for part in cursor.split(";"):
        if part.startswith("t="):
            with contextlib.suppress(ValueError):
                fields["__REALTIME_TIMESTAMP"] = str(int(part[2:], 16))
        elif part.startswith("b="):
            fields["_BOOT_ID"] = part[2:]
    if "__REALTIME_TIMESTAMP" not in fields:
        off = zone_offset(m.group("tz")) or 0
        t = stamp_epoch(m.group("date"), m.group("hms"), m.group("frac"), off)
        # a printed time that is none stays as printed: the entry then has no time, with a note
        fields["__REALTIME_TIMESTAMP"] = str(round(t * 1e6)) if t is not None else m.group(0).split(b" [")[0].decode()
    return fields


class VerboseReader:
    """``-o verbose`` lines -> records (one per entry, plus MESSAGE continuation lines).
    ``parser``: the source's :class:`logparse.sources.lines.LineParser` (entries, and
    lines outside entries)."""

    def __init__(self, parser, lines: Iterable[tuple[int, bytes]]) -> None:
        self.parser = parser
        self.lines = lines
        self.entry_line = 0
        self.fields: dict[str, str] | None = None
        self.message: list[bytes] | None = None
        self.in_message = False  # the last field line was MESSAGE
        self.indent = b""

    def records(self) -> Iterator[Record | list[Record]]:
        for n, raw in self.lines:
            if self.fields is not None and raw.startswith(b"    ") and self._field_line(raw):
                continue
            m = VERBOSE_HDR_RE.match(raw)
            if self.fields is not None:
                yield self._flush()
            if m is not None:
                self.entry_line = n
                self.fields = header_fields(m)
                continue
            r = self.parser.parse(n, raw)
            if r is not None:
                yield r
        if self.fields is not None:
            yield self._flush()
        rest = self.parser.finish()
        if rest:
            yield rest

    def _field_line(self, raw: bytes) -> bool:
        """An indented line of the current entry: a field, or the continuation of one.
        False: it is not (the entry ends here)."""
        if raw[4:5] != b" ":
            eq = raw.find(b"=", 4)
            if not (eq > 4 and is_field_name(raw[4:eq])):
                return False
            key = raw[4:eq]
            self.in_message = key == b"MESSAGE"
            if self.in_message:
                self.message = [raw[eq + 1 :]]
                self.indent = b" " * (eq + 1)
            else:
                k = META_KEYS_BYTES.get(key)
                if k is not None and self.fields is not None:
                    self.fields[k] = raw[eq + 1 :].decode("utf-8", "replace")
            return True
        if not self.in_message:
            return True  # continuation of another multi-line field
        if (raw.startswith(self.indent) or not raw.strip(b" ")) and self.message is not None:
            self.message.append(raw[len(self.indent) :])
            return True
        return False

    def _flush(self) -> list[Record]:
        msg = self.message
        if msg is None:
            values: list = []
        elif len(msg) == 1 and msg[0].endswith(b" blob data]") and BLOB_RE.fullmatch(msg[0]):
            values = [Blob(msg[0].decode())]
        else:
            values = [b"\n".join(msg)]
        records = self.parser.entry_records(self.entry_line, self.fields, values, "journal-verbose")
        self.fields = None
        self.message = None
        self.in_message = False
        return records

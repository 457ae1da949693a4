"""``journal-export``: ``journalctl -o export``, the Journal Export Format (binary-safe).

Format (``KEY=value`` lines, a blank line after each entry; a value holding a newline or
control characters is written binary: the name, a newline, its length as 64-bit little
endian, the bytes, a newline)::

    __CURSOR=s=1e7a;i=3;b=0d73...
    __REALTIME_TIMESTAMP=1795939685000000
    _BOOT_ID=0d7350dbe429f0ee884905998968980f
    _HOSTNAME=gpu-node-1
    _SYSTEMD_UNIT=sglang.service
    _PID=4669
    MESSAGE=[2026-11-29 08:08:05] server_args=ServerArgs(...)

    MESSAGE
    <le64 length><bytes: a tqdm bar with \\r, or several lines>

Record fields: as :mod:`.journal_entry` says; nothing is ever lost (this is what
``logparse --journal`` reads).  ``line_no`` is the line where the entry starts.  A line
that is no field (a marker, stray text) is one record of its own, read by the line parser
(with a warning unless it is a marker).  Streaming: memory is bounded by the largest entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from logparse.sources.formats.journal_entry import META_KEYS_BYTES
from logparse.sources.records import Record

FORMATS = ("journal-export",)
ALIASES = {"export": "journal-export"}

#: A binary field larger than this is taken as a corrupt stream (journald's own limit on
#: an entry is far smaller).
MAX_FIELD = 256 << 20

#: Journal field names: upper-case letters, digits and underscores, not starting with a digit.
_FIELD_NAME = re.compile(rb"[A-Z_][A-Z0-9_]*")
_field_ok: dict[bytes, bool] = {}


def is_field_name(key: bytes) -> bool:
    ok = _field_ok.get(key)
    if ok is None:
        ok = _FIELD_NAME.fullmatch(key) is not None
        if len(_field_ok) < 10_000:
            _field_ok[key] = ok
    return ok


def looks_like_export(lines: list[bytes]) -> bool:
    """First lines of a Journal Export Format stream?"""
    if not lines:
        return False
    first = lines[0]
    if first.startswith((b"__CURSOR=", b"__REALTIME_TIMESTAMP=", b"__MONOTONIC_TIMESTAMP=")):
        return True
    good = 0
    for ln in lines[:6]:
        eq = ln.find(b"=")
        key = ln[:eq] if eq > 0 else ln
        if is_field_name(key):
            good += 1
    return good >= min(4, len(lines)) and b"=" in first


class _Entry:
    """The fields of the entry being read."""

    def __init__(self, line_no: int) -> None:
        self.line_no = line_no
        self.fields: dict[str, str] = {}
        self.values: list = []

    def add(self, key: bytes, value: bytes) -> None:
        if key == b"MESSAGE":
            self.values.append(value)
        else:
            k = META_KEYS_BYTES.get(key)
            if k is not None:
                self.fields[k] = value.decode("utf-8", "replace")


class ExportReader:
    """Journal Export Format -> records, streaming.  ``parser``: the
    :class:`logparse.sources.lines.LineParser` of the source (entries and stray lines)."""

    def __init__(self, parser, chunks: Iterable[bytes]) -> None:
        self.parser = parser
        self._chunks = iter(chunks)
        self.buf = b""
        self.pos = 0
        self.eof = False
        self.line_no = 1
        self.entry: _Entry | None = None

    def records(self, finish: bool = True) -> Iterator[Record | list[Record]]:
        """The records of the stream; ``finish=False``: a piece of a stream read elsewhere
        (the vectorized path hands over single entries), the line parser's state is kept."""
        while True:
            if self.entry is None:
                whole = self._whole_entry()
                if whole is not None:
                    yield whole
                    continue
            nl = self.buf.find(b"\n", self.pos)
            if nl < 0:
                if not self.eof:
                    self._fill(len(self.buf) - self.pos + 1)
                    continue  # the next entry may now be whole
                if self.pos >= len(self.buf):
                    break
                self.buf += b"\n"  # last line without a newline
                nl = len(self.buf) - 1
            line = self.buf[self.pos : nl]
            if not line:
                if self.entry is not None:
                    yield self._end_entry()
                self._next_line(nl)
                continue
            eq = line.find(b"=")
            if eq > 0 and is_field_name(line[:eq]):
                self._entry().add(line[:eq], line[eq + 1 :])
                self._next_line(nl)
                continue
            if eq < 0 and is_field_name(line):
                nl = self._binary_field(len(line))
                if nl < 0:
                    continue
                line = self.buf[self.pos : nl]  # not a valid binary field: stray text
            r = self._stray_line(line)
            if r is not None:
                yield r
            self._next_line(nl)
        if self.entry is not None:
            yield self._end_entry()
        rest = self.parser.finish() if finish else None
        if rest:
            yield rest

    # -- steps ---------------------------------------------------------------------------
    def _whole_entry(self) -> list[Record] | None:
        """The common case in one go: a whole entry of ``KEY=VALUE`` lines (no binary field)
        already in the buffer, up to its blank line.  None: read it line by line."""
        buf, pos = self.buf, self.pos
        end = buf.find(b"\n\n", pos)
        if end <= pos:
            return None
        lines = buf[pos:end].split(b"\n")
        fields: dict[str, str] = {}
        values: list = []
        field_ok, meta = _field_ok, META_KEYS_BYTES
        for ln in lines:
            key, sep, val = ln.partition(b"=")
            ok = field_ok.get(key)
            if ok is None:
                ok = is_field_name(key)
            if not sep or not ok:
                return None
            if key == b"MESSAGE":
                values.append(val)
            else:
                k = meta.get(key)
                if k is not None:
                    fields[k] = val.decode("utf-8", "replace")
        records = self.parser.entry_records(self.line_no, fields, values, "journal-export")
        self.line_no += len(lines) + 1
        self.pos = end + 2
        return records

    def _next_line(self, nl: int) -> None:
        self.pos = nl + 1
        self.line_no += 1

    def _entry(self) -> _Entry:
        if self.entry is None:
            self.entry = _Entry(self.line_no)
        return self.entry

    def _end_entry(self) -> list[Record]:
        e = self.entry
        assert e is not None
        self.entry = None
        return self.parser.entry_records(e.line_no, e.fields, e.values, "journal-export")

    def _binary_field(self, name_len: int) -> int:
        """``NAME \\n <le64 size> <bytes> \\n`` at ``pos``: read it and return -1; else the end
        of the name line (which is then stray text)."""
        if len(self.buf) - self.pos < name_len + 9:
            self._fill(name_len + 9)
        buf, pos = self.buf, self.pos
        have = len(buf) - pos
        size = int.from_bytes(buf[pos + name_len + 1 : pos + name_len + 9], "little") if have >= name_len + 9 else -1
        if 0 <= size <= MAX_FIELD:
            total = name_len + 9 + size + 1
            if have < total:
                self._fill(total)
                buf, pos = self.buf, self.pos
            base = pos + name_len + 9
            if len(buf) - pos >= total and buf[base + size : base + size + 1] == b"\n":
                self._entry().add(buf[pos : pos + name_len], buf[base : base + size])
                self.line_no += buf.count(b"\n", pos + name_len, base + size + 1)
                self.pos = base + size + 1
                return -1
        return self.pos + name_len

    def _stray_line(self, line: bytes) -> Record | list[Record] | None:
        """A line that is no field: a marker or stray text, one record of its own."""
        r = self.parser.parse(self.line_no, line)
        if r.__class__ is Record and not r.marker:
            self.parser.source.note_problem("export-text")
        return r

    def _fill(self, need: int) -> None:
        """Make ``buf[pos:]`` at least ``need`` bytes long, unless the input ends first."""
        parts = [self.buf[self.pos :]]
        have = len(parts[0])
        while have < need and not self.eof:
            chunk = next(self._chunks, None)
            if chunk is None:
                self.eof = True
                break
            parts.append(chunk)
            have += len(chunk)
        self.buf = b"".join(parts)
        self.pos = 0

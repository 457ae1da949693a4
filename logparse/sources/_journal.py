"""Whole-stream journal renderings: ``journalctl -o export`` and ``-o verbose``.

Both produce one record per journal entry (plus one per further line of a multi-line
MESSAGE); lines that are not part of an entry (markers, stray text) go through the
line parser, so they are still one record each.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator

from logparse.sources.records import Record

from ._lines import BLOB_RE, META_KEYS, LineParser, _Blob
from ._time import date_epoch, frac_seconds, hms_seconds, zone_offset

#: Journal field names: upper-case letters, digits and underscores, not starting with a digit.
_FIELD_NAME = re.compile(rb"[A-Z_][A-Z0-9_]*")
_field_ok: dict[bytes, bool] = {}

_META_B = {k.encode(): k for k in META_KEYS}

#: A binary field larger than this is taken as a corrupt stream (journald's own limit on
#: an entry is far smaller).
MAX_FIELD = 256 << 20


def _is_field_name(key: bytes) -> bool:
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
        if _is_field_name(key):
            good += 1
    return good >= min(4, len(lines)) and b"=" in first


def export_records(parser: LineParser, chunks: Iterable[bytes]) -> Iterator[Record | list]:
    """Journal Export Format -> records, streaming (memory bounded by the largest entry)."""
    it = iter(chunks)
    buf = b""
    pos = 0
    eof = False
    line_no = 1
    fields: dict[str, str] = {}
    values: list = []
    entry_line = 0
    in_entry = False
    fmt = "journal-export"
    meta_b = _META_B

    def fill(need: int) -> None:
        """Make ``buf[pos:]`` at least ``need`` bytes long, unless the input ends first."""
        nonlocal buf, pos, eof
        parts = [buf[pos:]]
        have = len(parts[0])
        while have < need and not eof:
            chunk = next(it, None)
            if chunk is None:
                eof = True
                break
            parts.append(chunk)
            have += len(chunk)
        buf = b"".join(parts)
        pos = 0

    field_ok = _field_ok
    while True:
        if not in_entry:
            # fast path: a whole entry of KEY=VALUE lines (no binary field) up to its blank line
            end = buf.find(b"\n\n", pos)
            if end > pos:
                lines = buf[pos:end].split(b"\n")
                f: dict[str, str] = {}
                vals: list = []
                for ln in lines:
                    key, sep, val = ln.partition(b"=")
                    ok = field_ok.get(key)
                    if ok is None:
                        ok = _is_field_name(key)
                    if not sep or not ok:
                        break
                    if key == b"MESSAGE":
                        vals.append(val)
                    else:
                        k = meta_b.get(key)
                        if k is not None:
                            f[k] = val.decode("utf-8", "replace")
                else:
                    yield parser.entry_records(line_no, f, vals, fmt)
                    line_no += len(lines) + 1
                    pos = end + 2
                    continue
        nl = buf.find(b"\n", pos)
        if nl < 0:
            if not eof:
                fill(len(buf) - pos + 1)
                continue
            if pos >= len(buf):
                break
            nl = len(buf)  # last line without a newline
            buf += b"\n"
        line = buf[pos:nl]
        if not line:
            if in_entry:
                yield parser.entry_records(entry_line, fields, values, fmt)
                fields = {}
                values = []
                in_entry = False
            pos = nl + 1
            line_no += 1
            continue
        eq = line.find(b"=")
        if eq > 0 and _is_field_name(line[:eq]):
            key = line[:eq]
            if not in_entry:
                in_entry = True
                entry_line = line_no
            if key == b"MESSAGE":
                values.append(line[eq + 1 :])
            else:
                k = meta_b.get(key)
                if k is not None:
                    fields[k] = line[eq + 1 :].decode("utf-8", "replace")
            pos = nl + 1
            line_no += 1
            continue
        if eq < 0 and _is_field_name(line):
            # binary-safe form: NAME \n <le64 size> <bytes> \n
            rel = nl - pos
            if len(buf) - pos < rel + 9:
                fill(rel + 9)
            size = int.from_bytes(buf[pos + rel + 1 : pos + rel + 9], "little") if len(buf) - pos >= rel + 9 else -1
            if 0 <= size <= MAX_FIELD:
                total = rel + 9 + size + 1
                if len(buf) - pos < total:
                    fill(total)
                base = pos + rel + 9
                if len(buf) - pos >= total and buf[base + size : base + size + 1] == b"\n":
                    if not in_entry:
                        in_entry = True
                        entry_line = line_no
                    data = buf[base : base + size]
                    key = buf[pos : pos + rel]
                    if key == b"MESSAGE":
                        values.append(data)
                    else:
                        k = meta_b.get(key)
                        if k is not None:
                            fields[k] = data.decode("utf-8", "replace")
                    line_no += buf.count(b"\n", pos + rel, base + size + 1)
                    pos = base + size + 1
                    continue
            nl = pos + rel  # not a valid binary field: the name line is stray text
            line = buf[pos:nl]
        # a line that is no field: a marker or stray text, one record of its own
        r = parser.parse(line_no, line)
        if r.__class__ is Record and not r.marker:
            parser.source._problem("export-text")
        if r is not None:
            yield r
        pos = nl + 1
        line_no += 1
    if in_entry:
        yield parser.entry_records(entry_line, fields, values, fmt)
    rest = parser.finish()
    if rest:
        yield rest


VERBOSE_HDR_RE = re.compile(
    rb"(?P<wd>[A-Z][a-z]{2}) (?P<date>\d{4}-\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{1,9})?"
    rb" (?P<tz>\S+) \[(?P<cursor>s=[^\]]*)\]$"
)


def verbose_records(parser: LineParser, lines: Iterable[tuple[int, bytes]]) -> Iterator[Record | list]:
    """``journalctl -o verbose`` -> records (one per entry, plus MESSAGE continuation lines)."""
    entry_line = 0
    fields: dict[str, str] | None = None
    msg: list[bytes] | None = None
    cur_message = False
    indent = b""

    def flush():
        f = fields
        if msg is None:
            values: list = []
        elif len(msg) == 1 and msg[0].endswith(b" blob data]") and BLOB_RE.fullmatch(msg[0]):
            values = [_Blob(msg[0].decode())]
        else:
            values = [b"\n".join(msg)]
        return parser.entry_records(entry_line, f, values, "journal-verbose")

    for n, raw in lines:
        if fields is not None and raw.startswith(b"    "):
            if raw[4:5] != b" ":
                eq = raw.find(b"=", 4)
                if eq > 4 and _is_field_name(raw[4:eq]):
                    key = raw[4:eq]
                    cur_message = key == b"MESSAGE"
                    if cur_message:
                        msg = [raw[eq + 1 :]]
                        indent = b" " * (eq + 1)
                    else:
                        k = _META_B.get(key)
                        if k is not None:
                            fields[k] = raw[eq + 1 :].decode("utf-8", "replace")
                    continue
            elif cur_message and (raw.startswith(indent) or not raw.strip(b" ")):
                msg.append(raw[len(indent) :])
                continue
            elif not cur_message:
                continue  # continuation of another multi-line field
        m = VERBOSE_HDR_RE.match(raw)
        if fields is not None:
            yield flush()
            fields = None
            msg = None
            cur_message = False
        if m is not None:
            entry_line = n
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
                t = date_epoch(m.group("date")) + hms_seconds(m.group("hms")) + frac_seconds(m.group("frac")) - off
                fields["__REALTIME_TIMESTAMP"] = str(round(t * 1e6))
            continue
        r = parser.parse(n, raw)
        if r is not None:
            yield r
    if fields is not None:
        yield flush()
    rest = parser.finish()
    if rest:
        yield rest

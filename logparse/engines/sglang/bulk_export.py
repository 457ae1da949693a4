"""The Journal Export Format on the vectorized path (``journalctl -o export``, ``--journal``).

An export stream is entries of ``KEY=value`` lines ended by a blank line; a value with a
newline or control characters is written binary (``NAME\\n<le64 size><bytes>\\n``).

* :func:`segments` cuts the stream into pieces that end where an entry ends: clean blocks
  (:class:`Clean`, text fields only) for polars, and the few entries that hold a binary
  field (:class:`Raw`), which the record path reads as they are.  A binary field's size
  always holds NUL bytes (its upper bytes are zero) and a text field never does, so one
  ``find`` of a NUL tells a clean stretch from one that needs care.
* :class:`ExportBlock` finds the entries of a clean block in one pass of the C scanner
  (:func:`.bulk_native.export_entries`), or with numpy where it is not built (line starts from
  one newline scan, field names read as words at the line starts and looked up in a table of
  the known names, then a pass per watched field): per entry, its first line, whether the vectorized path can take it (one
  MESSAGE, a plain pid, only known fields, no stray text, no field that changes its unit),
  the spans of MESSAGE and the pid, and where each stream's cursor is after it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from logparse.engines.sglang import bulk_native
from logparse.sources.formats.journal_export import MAX_FIELD, is_field_name


@dataclass(slots=True)
class Clean:
    """Whole entries of text fields; ``data`` ends with the blank line that ends the last one,
    without its final newline (so that splitting at newlines gives that blank line)."""

    data: bytes


@dataclass(slots=True)
class Raw:
    """Entries holding a binary field, read by the record path; ``data`` as in the stream."""

    data: bytes


#: How far before a NUL byte a binary field may begin (its name line's newline, the size).
_NUL_MARGIN = 16


def entry_end(buf: bytes, pos: int, final: bool) -> int:
    """Where the entry starting at ``pos`` ends (after its blank line), read as
    :class:`logparse.sources.formats.journal_export.ExportReader` reads it; -1 when ``buf``
    ends first (the input's end when ``final``)."""
    n = len(buf)
    while True:
        nl = buf.find(b"\n", pos)
        if nl < 0:
            return n if final else -1
        line = buf[pos:nl]
        if not line:
            return nl + 1
        eq = line.find(b"=")
        if eq < 0 and is_field_name(line):
            end = _binary_end(buf, pos, len(line))
            if end == -1 and not final:
                return -1
            if end > 0:
                pos = end
                continue
        pos = nl + 1


def _binary_end(buf: bytes, pos: int, name_len: int) -> int:
    """The end of a binary field at ``pos``; -1: not all in ``buf``; -2: not a binary field."""
    have = len(buf) - pos
    if have < name_len + 9:
        return -1
    size = int.from_bytes(buf[pos + name_len + 1 : pos + name_len + 9], "little")
    if size > MAX_FIELD:
        return -2
    base = pos + name_len + 9
    if len(buf) < base + size + 1:
        return -1
    return base + size + 1 if buf[base + size : base + size + 1] == b"\n" else -2


def segments(chunks: Iterable[bytes], block_bytes: int) -> Iterator[Clean | Raw]:
    """The stream cut where entries end: clean blocks of about ``block_bytes`` and raw entries.

    The pieces are those :func:`_cut` makes of each :func:`~logparse.sources.streams.gathered`
    piece after the rest of the one before; where no NUL is held (every block of a text-only
    stream) the cut is found in the chunks themselves and only the clean block is joined: one
    fresh buffer a block, not three (the join, the rest put before it, the block sliced out),
    each paid in page faults and held under the GIL the classifying thread waits for."""
    pending: list[bytes] = []
    held = 0  # bytes of chunks since the last cut was tried (the rest before them not counted)
    for chunk in chunks:
        if not chunk:
            continue
        pending.append(chunk)
        held += len(chunk)
        if held < block_bytes:
            continue
        held = 0
        if any(b"\x00" in piece for piece in pending):
            pending = [(yield from _cut(b"".join(pending), final=False))]
            continue
        at = _last_end(pending)
        if at is not None:
            k, end = at
            yield Clean(b"".join([*pending[:k], memoryview(pending[k])[: end + 1]]))
            pending = _after(pending, k, end + 2)
    yield from _cut(b"".join(pending), final=True)


def _last_end(pieces: list[bytes]) -> tuple[int, int] | None:
    """Where the last ``\n\n`` of the pieces joined starts: (piece, offset in it), None: nowhere."""
    for k in range(len(pieces) - 1, -1, -1):
        piece = pieces[k]
        if k + 1 < len(pieces) and piece.endswith(b"\n") and pieces[k + 1].startswith(b"\n"):
            return k, len(piece) - 1  # across two pieces: later than any within this one
        at = piece.rfind(b"\n\n")
        if at >= 0:
            return k, at
    return None


def _after(pieces: list[bytes], k: int, start: int) -> list[bytes]:
    """The pieces from offset ``start`` of piece ``k`` on (``start`` may run into the next piece)."""
    while k < len(pieces) and start >= len(pieces[k]):
        start -= len(pieces[k])
        k += 1
    return [pieces[k][start:], *pieces[k + 1 :]] if k < len(pieces) else []


def _cut(buf: bytes, final: bool):
    """Yield what ``buf`` holds of whole entries; return the rest."""
    pos = 0
    n = len(buf)
    while pos < n:
        z = buf.find(b"\x00", pos)
        limit = n if z < 0 else max(pos, z - _NUL_MARGIN)
        cut = buf.rfind(b"\n\n", pos, limit)
        if cut >= pos:
            yield Clean(buf[pos : cut + 1])
            pos = cut + 2
            continue
        if z < 0:
            break  # no entry ends in what is here
        end = entry_end(buf, pos, final)
        if end < 0:
            break
        yield Raw(buf[pos:end])
        pos = end
    rest = buf[pos:]
    if final and rest:
        if b"\x00" in rest:
            yield Raw(rest)
        else:
            yield Clean(rest[:-1] if rest.endswith(b"\n") else rest)
        return b""
    return rest


#: Field names the vectorized path knows (systemd.journal-fields(7)); an entry with any other
#: line (another field, stray text) goes to the record path.
KNOWN_FIELDS = (
    "MESSAGE", "MESSAGE_ID", "PRIORITY", "CODE_FILE", "CODE_LINE", "CODE_FUNC", "ERRNO", "INVOCATION_ID",
    "USER_INVOCATION_ID", "SYSLOG_FACILITY", "SYSLOG_IDENTIFIER", "SYSLOG_PID", "SYSLOG_TIMESTAMP", "TID",
    "DOCUMENTATION", "UNIT", "USER_UNIT", "_PID", "_UID", "_GID", "_COMM", "_EXE", "_CMDLINE", "_CAP_EFFECTIVE",
    "_AUDIT_SESSION", "_AUDIT_LOGINUID", "_SYSTEMD_CGROUP", "_SYSTEMD_SLICE", "_SYSTEMD_UNIT", "_SYSTEMD_USER_UNIT",
    "_SYSTEMD_USER_SLICE", "_SYSTEMD_SESSION", "_SYSTEMD_OWNER_UID", "_SELINUX_CONTEXT",
    "_SOURCE_REALTIME_TIMESTAMP", "_SOURCE_MONOTONIC_TIMESTAMP", "_SOURCE_BOOTTIME_TIMESTAMP", "_BOOT_ID",
    "_MACHINE_ID", "_SYSTEMD_INVOCATION_ID", "_HOSTNAME", "_TRANSPORT", "_STREAM_ID", "_LINE_BREAK", "_NAMESPACE",
    "_RUNTIME_SCOPE", "_KERNEL_DEVICE", "_KERNEL_SUBSYSTEM", "_UDEV_SYSNAME", "_UDEV_DEVNODE", "__CURSOR",
    "__REALTIME_TIMESTAMP", "__MONOTONIC_TIMESTAMP", "__SEQNUM", "__SEQNUM_ID", "CONTAINER_ID", "CONTAINER_ID_FULL",
    "CONTAINER_NAME", "CONTAINER_TAG", "IMAGE_NAME",
)  # fmt: skip
#: Fields given at most once in an entry the vectorized path takes (the record path keeps the
#: last value of a repeated one, and sends one record per MESSAGE).
_ONCE = ("MESSAGE", "_PID", "__CURSOR", "_HOSTNAME", "_SYSTEMD_UNIT", "SYSLOG_IDENTIFIER", "_COMM", "SYSLOG_PID",
         "__REALTIME_TIMESTAMP", "_SOURCE_REALTIME_TIMESTAMP", "_BOOT_ID")  # fmt: skip
#: Fields that give an entry another unit than ``_SYSTEMD_UNIT`` (:func:`journal_entry.entry_unit`).
_UNIT_OVERRIDES = ("UNIT", "USER_UNIT", "CONTAINER_NAME", "_SYSTEMD_USER_UNIT")
_WORDS = 4  # field names of up to 32 bytes
_FIELD_NAMES = tuple(name.encode() for name in KNOWN_FIELDS)
_MULT = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x27D4EB2F165667C5)


def _key_table():
    import numpy as np

    rows = []
    for name in KNOWN_FIELDS:
        raw = name.encode().ljust(8 * _WORDS, b"\x00")
        rows.append([int.from_bytes(raw[8 * j : 8 * j + 8], "little") for j in range(_WORDS)] + [len(name)])
    table = np.array(rows, dtype=np.uint64)
    h = _hash(table[:, :_WORDS].T, table[:, _WORDS])
    order = np.argsort(h)
    return h[order], table[order], order


def _hash(words, klen):
    import numpy as np

    h = klen.astype(np.uint64)
    for j in range(_WORDS):
        h = h ^ (words[j] * np.uint64(_MULT[j]))
    return h


_TABLE: tuple | None = None


def _masks():
    import numpy as np

    return np.array([(1 << (8 * r)) - 1 for r in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def _key_ids(block: bytes, padded: bytes, starts, ends):
    """Per line: the index in :data:`KNOWN_FIELDS` of its field, -1 for any other line, -2 for a blank one.

    A line's name (up to the first ``=``) is read as four little-endian words, hashed, looked
    up in the table of known names and compared with the name found there."""
    import numpy as np

    from logparse.engines.sglang.bulk_template import first_byte

    global _TABLE
    if _TABLE is None:
        _TABLE = (*_key_table(), _masks())
    hashes, table, order, masks = _TABLE
    view = np.ndarray(shape=(len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
    # the first "=" among a line's first 32 bytes, found in the words the name is read from
    klen = np.full(len(starts), 8 * _WORDS + 1, dtype=np.int64)
    todo = np.arange(len(starts))
    for j in range(_WORDS):
        at = first_byte(view[starts[todo] + 8 * j], 61)
        found = at < 8
        klen[todo[found]] = 8 * j + at[found]
        todo = todo[~found]
        if not len(todo):
            break
    first_eq = starts + klen
    ok = (first_eq < ends) & (klen > 0) & (klen <= 8 * _WORDS)
    klen = np.where(ok, klen, 0)
    words = [view[starts] & masks[np.minimum(klen, 8)]]
    words.append(view[starts + 8] & masks[np.clip(klen - 8, 0, 8)])
    zero = np.zeros(len(starts), dtype=np.uint64)
    long = np.flatnonzero(klen > 16)  # most names are short: the last two words only where needed
    for j in (2, 3):
        w = zero.copy()
        w[long] = view[starts[long] + 8 * j] & masks[np.clip(klen[long] - 8 * j, 0, 8)]
        words.append(w)
    h = _hash(words, klen)
    cand = np.minimum(np.searchsorted(hashes, h), len(hashes) - 1)
    same = ok & (hashes[cand] == h) & (table[cand, _WORDS] == klen.astype(np.uint64))
    for j in range(_WORDS):
        same &= table[cand, j] == words[j]
    ids = np.where(same, order[cand], -1)
    return np.where(starts == ends, -2, ids), first_eq


#: Each known name's place among the watched fields (:data:`_ONCE`, then :data:`_UNIT_OVERRIDES`), 255 none.
_SLOTS = bytes(
    (_ONCE + _UNIT_OVERRIDES).index(name) if name in _ONCE + _UNIT_OVERRIDES else 255 for name in KNOWN_FIELDS
)


class ExportBlock:
    """A clean block's entries, found in C (:func:`.bulk_native.export_entries`, one pass) or with
    numpy: their first lines, whether the vectorized path takes each, the spans of MESSAGE and the
    pid, and the cursor of each stream."""

    def __init__(self, block: bytes) -> None:
        import numpy as np

        self.block = block
        if bulk_native.available():
            watched = len(_ONCE) + len(_UNIT_OVERRIDES)
            self.n_lines, table = bulk_native.export_entries(block, _FIELD_NAMES, _SLOTS, watched, len(_ONCE))
            first_line, self.entry_start, flags = table[:, 0], table[:, 1], table[:, 2]
            keep, simple = (flags & 1) != 0, (flags & 2) != 0
            spans = {name: (table[:, 3 + 2 * k], table[:, 4 + 2 * k]) for k, name in enumerate(_ONCE)}
        else:
            first_line, keep, simple, spans = self._numpy(block)
        self.kept = np.flatnonzero(keep)
        # every entry but a trailing blank line's is kept, mostly: views then, not 25 gathers
        whole = len(self.kept) and self.kept[-1] == len(self.kept) - 1
        take = slice(0, len(self.kept)) if whole else self.kept
        self.rows = first_line[take]
        self.simple = simple[take]
        self._spans = {name: (s[take], e[take]) for name, (s, e) in spans.items()}

    def _numpy(self, block: bytes):
        """Per entry: its first line, kept, simple, and ``{field: (start, end)}`` of its value,
        from each line's field (:func:`_key_ids`); sets :attr:`n_lines` and :attr:`entry_start`."""
        import numpy as np

        padded = block + b"\x00" * (8 * _WORDS + 8)
        nl = np.flatnonzero(np.frombuffer(block, np.uint8) == 10)
        starts = np.concatenate(([0], nl + 1))
        ends = np.concatenate((nl, [len(block)]))
        ids, first_eq = _key_ids(block, padded, starts, ends)
        self.n_lines = len(starts)
        blank = ids == -2
        grp = np.cumsum(blank) - blank
        ngrp = int(grp[-1]) + 1
        keep = np.bincount(grp, weights=~blank, minlength=ngrp) > 0
        first_line = np.searchsorted(grp, np.arange(ngrp))
        self.entry_start = starts[first_line]
        simple, where = self._simple(ids, grp, ngrp)
        spans = {}
        for name, at in where.items():
            has = at >= 0
            safe = np.where(has, at, 0)
            spans[name] = (np.where(has, first_eq[safe] + 1, -1), np.where(has, ends[safe], -1))
        return first_line, keep, simple, spans

    def _simple(self, ids, grp, ngrp):
        """Per entry: the vectorized path takes it; and the line of each field in :data:`_ONCE`."""
        import numpy as np

        watched = _ONCE + _UNIT_OVERRIDES
        slot = np.full(len(KNOWN_FIELDS) + 2, len(watched), dtype=np.int64)  # ids -2, -1 at the end
        for k, name in enumerate(watched):
            slot[KNOWN_FIELDS.index(name)] = k
        width = len(watched) + 1
        cell = grp * width + slot[ids]
        counts = np.bincount(cell, minlength=ngrp * width).reshape(ngrp, width)
        at = np.full(ngrp * width, -1, dtype=np.int64)
        at[cell] = np.arange(len(ids))
        at = at.reshape(ngrp, width)
        unknown = np.bincount(grp, weights=ids == -1, minlength=ngrp)
        simple = (unknown == 0) & (counts[:, : len(_ONCE)] <= 1).all(axis=1)
        simple &= (counts[:, len(_ONCE) : len(watched)] == 0).all(axis=1)
        where = {name: at[:, k] for k, name in enumerate(_ONCE)}
        simple &= (where["MESSAGE"] >= 0) & (where["_PID"] >= 0)
        return simple, where

    def value_spans(self, name: str):
        """(start, end) of the value of field ``name`` in each kept entry (-1, -1 where absent)."""
        return self._spans[name]

    def pids(self):
        """The pid of each kept entry (0 where it is not a plain positive number)."""
        import numpy as np

        s, e = self.value_spans("_PID")
        if bulk_native.available():
            return bulk_native.span_ints(self.block, s, e)
        width = e - s
        ok = (width >= 1) & (width <= 10)
        a = np.frombuffer(self.block + b"\x00" * 16, np.uint8)
        val = np.zeros(len(s), dtype=np.int64)
        for k in range(10):
            inside = ok & (k < width)
            d = a[np.where(inside, s + k, 0)].astype(np.int64) - 48
            ok &= ~inside | ((d >= 0) & (d <= 9))
            val = np.where(inside, val * 10 + d, val)
        return np.where(ok, val, 0)

    def texts(self, entries) -> list[bytes]:
        """The bytes of the kept entries numbered ``entries`` (blank line included)."""
        starts = self.entry_start
        grp_of = self.kept
        out = []
        for k in entries:
            g = grp_of[k]
            end = starts[g + 1] if g + 1 < len(starts) else len(self.block)
            out.append(self.block[starts[g] : end])
        return out

    def last_cursors(self, vec) -> list[tuple[int, tuple, str]]:
        """``(entry, (host, unit), __CURSOR)`` of the last entry of each stream among the entries
        ``vec`` (a mask) that carry a cursor: where each stream's cursor is after them."""
        import numpy as np

        blk = self.block
        cs, ce = self.value_spans("__CURSOR")
        hs, he = self.value_spans("_HOSTNAME")
        us, ue = self._unit_spans()
        a = np.frombuffer(blk, np.uint8)
        remaining = np.asarray(vec) & (cs >= 0)
        out = []
        while remaining.any():
            k = int(np.flatnonzero(remaining)[-1])
            same = remaining & _same_span(blk, a, hs, he, k) & _same_span(blk, a, us, ue, k)
            host = blk[hs[k] : he[k]].decode("utf-8", "replace") if hs[k] >= 0 else None
            unit = blk[us[k] : ue[k]].decode("utf-8", "replace") if us[k] >= 0 else None
            out.append((k, (host, unit), blk[cs[k] : ce[k]].decode("utf-8", "replace")))
            remaining &= ~same
        out.reverse()
        return out

    def _unit_spans(self):
        """The span of each entry's unit: ``_SYSTEMD_UNIT``, else ``SYSLOG_IDENTIFIER``, else ``_COMM``
        (the first that is not empty, as :func:`journal_entry.entry_unit` reads them)."""
        import numpy as np

        su_s, su_e = self.value_spans("_SYSTEMD_UNIT")
        id_s, id_e = self.value_spans("SYSLOG_IDENTIFIER")
        co_s, co_e = self.value_spans("_COMM")
        use_su = su_e > su_s
        use_id = ~use_su & (id_e > id_s)
        return np.where(use_su, su_s, np.where(use_id, id_s, co_s)), np.where(
            use_su, su_e, np.where(use_id, id_e, co_e)
        )


def _same_span(blk: bytes, a, s, e, k: int):
    """Which spans hold the same bytes as span ``k`` (absent spans, -1, equal each other)."""
    import numpy as np

    if bulk_native.available():
        return bulk_native.same_spans(blk, s, e, k)
    length = e - s
    same = (length == length[k]) & ((s >= 0) == (s[k] >= 0))
    width = int(length[k])
    if s[k] < 0 or width <= 0:
        return same
    idx = np.flatnonzero(same)
    rows = a[s[idx, None] + np.arange(width)]
    ok = (rows == a[s[k] : s[k] + width]).all(axis=1)
    same[idx[~ok]] = False
    return same

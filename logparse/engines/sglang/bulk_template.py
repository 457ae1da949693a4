"""Batch lines proven with numpy: most of a production log, at a few operations a line.

Most lines of a long log are SGLang's ``Decode batch`` / ``Prefill batch`` lines in the one shape
today's SGLang writes.  This module checks that shape with numpy over a whole block at once (line
starts from one newline scan; fixed words compared eight bytes at a time at offsets computed from
the numbers before them) and reads the four runtime figures and the stamp from the same bytes.

A row is *proven* only when its whole message is exactly::

    [YYYY-mm-dd HH:MM:SS(.mmm)( ITEM)*] Decode batch, #running-req: N, #token: N, token usage: F,
        cuda graph: True|False, gen throughput (token/s): F, #queue-req: N
    [...] Prefill batch, #new-seq: N, #new-token: N, #cached-token: N, token usage: F,
        #running-req: N, #queue-req: N, #pending-token: N, cuda graph: B, input throughput (token/s): F

(ASCII only, no other text, items of the bracket plain words): for such a row the polars
classification of :mod:`logparse.engines.sglang.bulk_classify` can only say "a batch line, vectorized", and its
fields are the ones read here.  Every other row, a line that almost matches included, goes through
the polars expressions as before (``tests/engines/sglang/test_bulk.py`` checks both paths on near misses).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from logparse.grammar import bounds, runtime_decoder

#: Bytes after the block, so that a word read at any offset a few bytes past a line stays inside.
_PAD = 64
_U = np.uint64
_LOW7 = _U(0x7F7F7F7F7F7F7F7F)
_ADD = _U(0x7676767676767676)
_HIGH = _U(0x8080808080808080)
_ZEROS = _U(0x3030303030303030)
_ALL = (1 << 64) - 1

#: Characters of a bracket item (``sglang_prefix.WORD`` without its ``[N]`` suffix): 1 may start
#: an item, 2 may go on.
_ITEM = np.zeros(256, np.uint8)
for _c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_":
    _ITEM[_c] = 1
for _c in b"0123456789.-":
    _ITEM[_c] = 2
#: Characters of a request path a proven access line may hold: none of an anchor's (each anchor
#: holds a space, a capital, ``_``, ``#`` or ``=``; tests/engines/sglang/test_bulk.py checks it).
PATH_CHARS = b"abcdefghijklmnopqrstuvwxyz0123456789/.-?&%"
_PATH = np.zeros(256, bool)
_PATH[list(PATH_CHARS)] = True
_CLIENT = np.zeros(256, bool)
_CLIENT[list(b"0123456789.")] = True
#: Reason phrases of a proven access line (none holds an anchor).
REASONS = (
    "OK",
    "Created",
    "Accepted",
    "No Content",
    "Bad Request",
    "Unauthorized",
    "Forbidden",
    "Not Found",
    "Method Not Allowed",
    "Request Timeout",
    "Unprocessable Entity",
    "Too Many Requests",
    "Internal Server Error",
    "Bad Gateway",
    "Service Unavailable",
    "Gateway Timeout",
)
METHODS = ("GET ", "POST ", "PUT ", "DELETE ", "HEAD ", "OPTIONS ", "PATCH ")
#: How long the items of a bracket may be (the prefix regexp looks at the first 96 characters).
MAX_ITEMS = 40
_POW10 = np.array([10**k for k in range(19)], dtype=np.int64)


class Bytes:
    """A block's bytes as numpy arrays: single bytes, and the 8 bytes at every offset (little-endian)."""

    def __init__(self, data: bytes, pad: bool = True) -> None:
        self.size = len(data)
        # numpy's steps read past a line's end (the padding's zeros never match); the C scanner
        # checks every offset and reads the block in place (``pad=False``: no copy of 4 MB a block)
        buf = data + bytes(_PAD) if pad else data
        self.arr = np.frombuffer(buf, np.uint8)
        # overlapping unaligned words: word k is bytes k..k+7
        self.w8 = np.ndarray((max(len(buf) - 7, 0),), dtype="<u8", buffer=buf, strides=(1,))

    def lines(self) -> tuple[np.ndarray, np.ndarray]:
        """Start and end (the newline's offset) of each line: one per newline, plus the last."""
        nl = np.flatnonzero(self.arr[: self.size] == 10)
        starts = np.empty(len(nl) + 1, np.int64)
        starts[0] = 0
        starts[1:] = nl + 1
        ends = np.empty(len(nl) + 1, np.int64)
        ends[:-1] = nl
        ends[-1] = self.size
        return starts, ends

    def literal(self, pos: np.ndarray, text: bytes) -> np.ndarray:
        """Whether ``text`` stands at each offset."""
        ok = np.ones(len(pos), bool)
        for k in range(0, len(text), 8):
            chunk = text[k : k + 8]
            word = self.w8[pos + k]
            if len(chunk) < 8:
                word = word & _U((1 << (8 * len(chunk))) - 1)
            ok &= word == _U(int.from_bytes(chunk, "little"))
        return ok

    def shape(self, pos: np.ndarray, pattern: str) -> np.ndarray:
        """Whether the text at each offset has ``pattern``'s shape: ``D`` a digit, any other
        character itself."""
        ok = np.ones(len(pos), bool)
        for k in range(0, len(pattern), 8):
            chunk = pattern[k : k + 8]
            digits = sum(0xFF << (8 * i) for i, c in enumerate(chunk) if c == "D")
            fixed = sum(0xFF << (8 * i) for i, c in enumerate(chunk) if c != "D")
            value = sum(ord(c) << (8 * i) for i, c in enumerate(chunk) if c != "D")
            word = self.w8[pos + k]
            ok &= (_non_digits(word) & _U(digits & 0x8080808080808080)) == 0
            ok &= (word & _U(fixed)) == _U(value)
        return ok

    def stamp_parts(self, pos: np.ndarray) -> list[np.ndarray]:
        """Year, month, day, hour, minute, second of ``YYYY-MM-DD?HH:MM:SS`` at each offset (its
        digits already checked), read from three words a row."""
        words = [self.w8[pos + k].astype(np.int64) for k in (0, 8, 16)]

        def digit(word: int, byte: int) -> np.ndarray:
            return ((words[word] >> (8 * byte)) & 0xFF) - 48

        def two(word: int, byte: int) -> np.ndarray:
            return digit(word, byte) * 10 + digit(word, byte + 1)

        year = two(0, 0) * 100 + two(0, 2)
        return [year, two(0, 5), two(1, 0), two(1, 3), two(1, 6), two(2, 1)]

    def digits(self, pos: np.ndarray, count: int) -> np.ndarray:
        """The number written with ``count`` digits at each offset (digits already checked)."""
        value = np.zeros(len(pos), np.int64)
        for k in range(count):
            value = value * 10 + (self.arr[pos + k].astype(np.int64) - 48)
        return value

    def number(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The unsigned integer at each offset and its length in digits (0: none; at most 16)."""
        y0 = self.w8[pos] ^ _ZEROS
        n0 = _leading_digits(y0)
        v0 = _swar_value(y0, n0)
        long = n0 == 8
        if not long.any():
            return v0, n0
        y1 = self.w8[pos + 8] ^ _ZEROS
        n1 = np.where(long, _leading_digits(y1), 0)
        return v0 * _POW10[n1] + _swar_value(y1, n1), n0 + n1


def block_bytes(data: bytes) -> Bytes:
    """A block as numpy's templates read it (:func:`.bulk_native.block_bytes` is the C scanner's)."""
    return Bytes(data)


def lines(b: Bytes) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`Bytes.lines` (:func:`.bulk_native.lines` is the C scanner's)."""
    return b.lines()


def distinct_ints(a: np.ndarray) -> list[int]:
    """The distinct values of an integer array, in order: without np.unique's sort where they span
    a short range (a block's pids, templates, throughput buckets: one or a few values over a million
    rows), which also spares np.unique's import of numpy.ma on the first call."""
    if not len(a):
        return []
    lo, hi = int(a.min()), int(a.max())
    if lo == hi:
        return [lo]
    if hi - lo < 1 << 16:
        return (np.flatnonzero(np.bincount(a - lo)) + lo).tolist()
    return np.unique(a).tolist()


def _non_digits(word: np.ndarray) -> np.ndarray:
    """The high bit of each byte that is not an ASCII digit."""
    y = word ^ _ZEROS
    return (((y & _LOW7) + _ADD) | y) & _HIGH


def _leading_digits(y: np.ndarray) -> np.ndarray:
    """How many of the 8 bytes (``^ '0'`` already applied) are digits before the first other byte."""
    nd = (((y & _LOW7) + _ADD) | y) & _HIGH
    low = (nd & (~nd + _U(1))) >> _U(7)  # lowest set bit: 256**k for the first non-digit k
    # a power of two's exponent, read from its float's bits
    k = ((low.astype(np.float64).view(np.int64) >> 52) - 1023) >> 3
    return np.where(nd == 0, 8, k)


def first_byte(words: np.ndarray, value: int) -> np.ndarray:
    """The index (0-7) of the first byte equal to ``value`` in each word, 8 where none is."""
    x = words ^ _U(value * 0x0101010101010101)
    zero = (x - _U(0x0101010101010101)) & ~x & _HIGH  # exact up to the first zero byte
    low = (zero & (~zero + _U(1))) >> _U(7)
    k = ((low.astype(np.float64).view(np.int64) >> 52) - 1023) >> 3
    return np.where(zero == 0, 8, k)


def _swar_value(y: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The value of the first ``n`` bytes of ``y`` (digit values, the first the most significant)."""
    n64 = n.astype(np.uint64)
    keep = np.where(n == 8, _U(_ALL), (_U(1) << (n64 * _U(8))) - _U(1))
    y = (y & keep) << (_U(8) * (_U(8) - n64))
    y = np.where(n == 0, _U(0), y)
    y = ((y & _U(0x0F0F0F0F0F0F0F0F)) * _U(2561)) >> _U(8)
    y = ((y & _U(0x00FF00FF00FF00FF)) * _U(6553601)) >> _U(16)
    y = ((y & _U(0x0000FFFF0000FFFF)) * _U(42949672960001)) >> _U(32)
    return y.astype(np.int64)


@dataclass
class Rows:
    """Candidate rows being matched: their row numbers, where each one's match has got to, where
    its message ends, the figures read so far (all arrays of the same length), and whether each
    still matches (``ok``: failed rows are dropped only where the rows branch and at the end,
    their positions kept inside their lines meanwhile)."""

    row: np.ndarray
    pos: np.ndarray
    end: np.ndarray
    cols: dict
    ok: np.ndarray = dataclasses.field(default_factory=lambda: np.ones(0, bool))

    def __post_init__(self) -> None:
        if len(self.ok) != len(self.row):
            self.ok = np.ones(len(self.row), bool)

    def keep(self, ok: np.ndarray) -> None:
        self.ok &= ok & (self.pos <= self.end)
        self.pos = np.minimum(self.pos, self.end)

    def subset(self, ok: np.ndarray) -> Rows:
        """The rows still matching where ``ok`` holds."""
        ok = ok & self.ok
        return Rows(self.row[ok], self.pos[ok], self.end[ok], {k: v[ok] for k, v in self.cols.items()})

    def matched(self) -> Rows:
        return self.subset(self.ok)


#: The figure column of each field the runtime peaks are made of (:data:`logparse.grammar.bounds.BATCH_FIELDS`,
#: SWA's ``full_`` fields standing for them, as :class:`logparse.engines.sglang.assemble.RuntimeAgg` reads them).
COLUMNS = {
    "running_req": "running",
    "token": "tokens",
    "full_token": "tokens",
    "token_usage": "usage",
    "full_token_usage": "usage",
    "queue_req": "queue",
    "gen_throughput": "gen",
}


def template(shape: runtime_decoder.Shape) -> tuple[str, ...]:
    """The (literal, field) steps of a runtime shape (``grammars/sglang/runtime.toml``), after the
    bracket's ``]``: a literal is matched as it stands; a field is ``bool`` or ``i:NAME``/``f:NAME``
    (an integer, a decimal ``I.F``), its value kept as the column :data:`COLUMNS` names and checked
    against its field's bound (:func:`logparse.grammar.bounds.bound_of`)."""
    steps: list[str] = []
    text = "] " + shape.head
    for k, f in enumerate(shape.fields):
        steps.append(text + (shape.sep if k else "") + f.label)
        steps.append("bool" if f.type == "bool" else ("i:" if f.type == "int" else "f:") + f.name)
        text = ("%" if f.type == "percent" else "") + f.unit
    if text + shape.tail:
        steps.append(text + shape.tail)
    return tuple(s for s in steps if s)


#: The templates of each family, in the order of the spec (today's default wording first).
DECODE = tuple(template(s) for s in runtime_decoder.families("sglang")["decode_batch"])
PREFILL = tuple(template(s) for s in runtime_decoder.families("sglang")["prefill_batch"])


def _step(b: Bytes, rows: Rows, step: str) -> None:
    """Match one step of a template at each row's position and move past it."""
    pos = rows.pos
    if not step.startswith(("i:", "f:", "bool")):
        rows.keep(b.literal(pos, step.encode()))
        rows.pos = rows.pos + len(step)
        return
    if step == "bool":
        true, false = b.literal(pos, b"True"), b.literal(pos, b"False")
        rows.pos = pos + np.where(true, 4, 5)
        rows.keep(true | false)
        return
    value, n = b.number(pos)
    if step.startswith("f:"):
        # a decimal "I.F": exact integers divided, as correctly rounded as a parser's result
        frac, m = b.number(pos + n + 1)
        ok = (n > 0) & (n <= 15) & (b.arr[pos + n] == 46) & (m > 0) & (n + m <= 15)
        m = np.where(ok, m, 0)
        value = (value * _POW10[m] + frac) / _POW10[m].astype(np.float64)
        n = n + 1 + m
    else:
        ok = (n > 0) & (n <= 15)
    field = step[2:]
    if field in COLUMNS:
        rows.cols[COLUMNS[field]] = value
    # a figure beyond its bound leaves the row to polars and the record path, which warn
    bound = bounds.bound_of(field)
    if bound.whole and step.startswith("f:"):
        ok = ok & False
    elif bound.lo > 0 or bound.hi < 10**15:
        ok = ok & (value >= bound.lo) & (value <= bound.hi)
    rows.pos = pos + n
    rows.keep(ok)


def _template(b: Bytes, rows: Rows, steps: tuple) -> Rows:
    for step in steps:
        _step(b, rows, step)
        if not rows.ok.any():
            break
    rows.keep(rows.pos == rows.end)
    return rows.matched()


def _family(b: Bytes, rows: Rows, templates: tuple) -> Rows:
    """The rows one of ``templates`` proves, each tried on the rows the ones before it left; in
    row order."""
    parts = []
    for steps in templates:
        if not len(rows.row):
            break
        got = _template(b, Rows(rows.row, rows.pos.copy(), rows.end, dict(rows.cols)), steps)
        if len(got.row):
            parts.append(got)
            rows = rows.subset(~np.isin(rows.row, got.row))
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return rows.subset(np.zeros(len(rows.row), bool))
    row = np.concatenate([p.row for p in parts])
    order = np.argsort(row, kind="stable")
    names = set.intersection(*(set(p.cols) for p in parts))
    cols = {k: np.concatenate([p.cols[k] for p in parts])[order] for k in names}
    return Rows(
        row[order], np.concatenate([p.pos for p in parts])[order], np.concatenate([p.end for p in parts])[order], cols
    )


def _bracket(b: Bytes, rows: Rows) -> None:
    """SGLang's ``[stamp items]`` at each row's position: keeps the rows where it is plain
    (a 19-character stamp, or 23 with milliseconds; items of plain words), with the stamp as a
    number ``ts`` that sorts as its text does, and moves to its ``]``."""
    rows.keep(b.shape(rows.pos, "[DDDD-DD-DD DD:DD:DD"))
    pos = rows.pos
    parts = b.stamp_parts(pos + 1)
    rows.keep(_real_time(*parts))  # a stamp that names no real time: the record path says so
    code = parts[0]
    for part in parts[1:]:
        code = code * 100 + part
    milli = b.arr[pos + 20] == 46
    after = b.arr[pos + 24]
    ok = ~milli | (b.shape(pos + 21, "DDD") & ((after == 32) | (after == 93)))
    msv = np.where(milli, 1000 + b.digits(pos + 21, 3), 0)
    rows.cols["ts"] = code * 10000 + msv
    rows.cols["ts_at"] = pos + 1
    rows.pos = pos + np.where(milli, 24, 20)
    rows.keep(ok)
    _items(b, rows)


#: Whether month m (0-99) and day d (0-99) make a date of some year, at ``m * 100 + d`` (Feb 29 too:
#: its year is looked at only for the few rows that have it).
_MONTH_DAY = np.zeros(100 * 100, bool)
for _m, _n in enumerate((31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31), 1):
    _MONTH_DAY[_m * 100 + 1 : _m * 100 + _n + 1] = True


def _real_time(year, month, day, hour, minute, second) -> np.ndarray:
    """Which stamps name a real time: :func:`logparse.sources.timestamps.civil_epoch`'s checks,
    vectorized (rows whose shape did not match hold any numbers: clipped)."""
    ok = _MONTH_DAY[np.clip(month * 100 + day, 0, 9999)] & (hour < 24) & (minute < 60) & (second < 60) & (year >= 1)
    feb29 = np.flatnonzero((month == 2) & (day == 29))
    if len(feb29):
        y = year[feb29]
        ok[feb29] &= (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    return ok


def _items(b: Bytes, rows: Rows) -> None:
    """The bracket's items, `` WORD`` each: move every row to its ``]`` (or drop it)."""
    pos = rows.pos
    open_ = (b.arr[pos] != 93) & rows.ok
    rows.cols["bare"] = ~open_
    ok = ~open_ | (b.arr[pos] == 32)
    close = pos.copy()
    prev_space = np.zeros(len(pos), bool)
    for k in range(MAX_ITEMS + 1):
        if not open_.any():
            break
        c = b.arr[pos + k]
        cls = _ITEM[c]
        shut = open_ & (c == 93)
        close = np.where(shut, pos + k, close)
        still = open_ & ~shut
        good = np.where(prev_space, cls == 1, (cls > 0) | (c == 32)) if k else c == 32
        ok &= ~still | good
        ok &= ~shut | ~prev_space
        prev_space = c == 32
        open_ = still
    ok &= ~open_
    rows.pos = close
    rows.keep(ok)


def _run(b: Bytes, rows: Rows, table: np.ndarray, cap: int) -> None:
    """Move each row past a run of 1 to ``cap`` characters of ``table``."""
    pos = rows.pos
    n = np.zeros(len(pos), np.int64)
    going = rows.ok.copy()
    for k in range(cap + 1):
        going &= table[b.arr[pos + k]]
        if not going.any():
            break
        n += going
    rows.pos = pos + n
    rows.keep((n > 0) & (n <= cap))


def _one_of(b: Bytes, rows: Rows, words: tuple, last: bool = False) -> None:
    """Move each row past one of ``words`` (``last``: which then ends its message)."""
    pos = rows.pos
    ok = np.zeros(len(pos), bool)
    new = pos.copy()
    for w in words:
        hit = ~ok & b.literal(pos, w.encode())
        if last:
            hit &= pos + len(w) == rows.end
        new = np.where(hit, pos + len(w), new)
        ok |= hit
    rows.pos = new
    rows.keep(ok)


def access_rows(b: Bytes, rows: Rows) -> Rows:
    """The proven uvicorn access lines (``] INFO:     1.2.3.4:5 - "GET /path HTTP/1.1" 200 OK``)
    among bracketed ``rows`` with no items: mentions no anchor, needs no cleaning."""
    rows.keep(b.literal(rows.pos, b"] INFO:     "))
    rows.pos = rows.pos + 12
    _run(b, rows, _CLIENT, 39)
    rows.keep(b.arr[rows.pos] == 58)
    rows.pos = rows.pos + 1
    _, n = b.number(rows.pos)
    rows.pos = rows.pos + n
    rows.keep((n > 0) & (n <= 5) & b.literal(rows.pos, b' - "'))
    rows.pos = rows.pos + 4
    _one_of(b, rows, METHODS)
    _run(b, rows, _PATH, 200)
    rows.keep(b.literal(rows.pos, b' HTTP/1.1" ') & b.shape(rows.pos + 11, "DDD "))
    rows.pos = rows.pos + 15
    _one_of(b, rows, REASONS, last=True)
    return rows.matched()


def batch_rows(b: Bytes, rows: Rows) -> tuple[Rows, Rows, Rows]:
    """The proven Decode, Prefill and access rows among ``rows`` (positioned at their messages)."""
    _bracket(b, rows)
    decode = rows.subset(b.literal(rows.pos, DECODE[0][0][:10].encode()))
    prefill = rows.subset(b.literal(rows.pos, PREFILL[0][0][:10].encode()))
    access = rows.subset(rows.cols.pop("bare") & b.literal(rows.pos, b"] INFO"))
    decode.cols.pop("bare")
    prefill.cols.pop("bare")
    return _family(b, decode, DECODE), _family(b, prefill, PREFILL), access_rows(b, access)


def header_rows(b: Bytes, starts: np.ndarray, ends: np.ndarray, reference: bytes) -> Rows:
    """Rows of a ``short-iso`` block whose journal header has the shape of ``reference`` (the
    block's first header: ``<stamp> host ident[``, ASCII, no other bracket): its stamp's digits
    and separators, then its ``host ident[`` itself, a pid of digits and ``]: ``.  Column ``pid``;
    positioned at the message."""
    gap = reference.index(b" ")
    pattern = "".join("D" if chr(c).isdigit() else chr(c) for c in reference[:gap])
    rows = Rows(np.arange(len(starts)), starts.copy(), ends, {})
    rows.keep(b.shape(rows.pos, pattern) & b.literal(rows.pos + gap, reference[gap:]))
    if pattern.startswith("DDDD-DD-DDTDD:DD:DD"):  # a header time that names none: the record path says so
        rows.keep(_real_time(*b.stamp_parts(rows.pos)))
    rows.pos = rows.pos + len(reference)
    pid, n = b.number(rows.pos)
    rows.cols["pid"] = pid
    rows.pos = rows.pos + n
    rows.keep((n > 0) & (n <= 10) & b.literal(rows.pos, b"]: "))
    rows.pos = rows.pos + 3
    return rows.matched()


def stamp_text(code: int) -> str:
    """The ISO text of a stamp number of :func:`_bracket` (``T`` between date and time)."""
    d, frac = divmod(code, 10000)
    t = f"{d:014d}"
    text = f"{t[:4]}-{t[4:6]}-{t[6:8]}T{t[8:10]}:{t[10:12]}:{t[12:14]}"
    return text + f".{frac - 1000:03d}" if frac else text


def stamp_texts(b: Bytes, at: np.ndarray, width: int) -> np.ndarray:
    """The stamps of ``width`` characters at offsets ``at`` as one buffer, ``T`` between date and
    time (ISO): row k is bytes ``k * width`` to ``(k + 1) * width``."""
    cells = b.arr[at[:, None] + np.arange(width)]
    cells[:, 10] = 84  # "T"
    return cells.ravel()

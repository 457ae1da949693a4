"""Sources: bytes to records.

Public API (used by the pipeline, the CLI and the store):

* ``open_inputs(paths, input_format=None)`` yields one :class:`Source` per input
  (a file, every regular file below a directory in sorted order, ``-`` for stdin).
  ``.gz`` and ``.zst`` content is decompressed (recognised by its magic bytes).
* ``journal_source(unit=None, since=None, until=None, directory=None, file=None,
  after_cursor=None, extra_args=())`` runs ``journalctl -o export --all`` with those
  filters and reads its output as a stream.
* ``text_source(name, text, input_format=None)``: a source over an in-memory string.
* :class:`InputError` is raised for a problem with an input the user named
  (missing path, unreadable file, a directory without files, an unknown format name,
  journalctl missing or failing): the CLI turns it into one line on stderr and exit
  code 2.

A :class:`Source` is read once, as a stream, through ``records()``; the content hash,
byte count, ``warnings`` and ``last_cursor`` are complete once the iterator is exhausted.
``fmt`` is known before reading (the first 64 KiB are sniffed on first access).

Input formats (``input_format=`` names; by default each input is sniffed from its first
lines, and every line is still examined on its own, so inputs that mix formats work):

==============================  =========================================================
``plain``                       SGLang's own output (also ``journalctl -o cat``).
``raw``                         Every line verbatim: nothing stripped, no markers.
``journal-cat``                 ``journalctl -o cat`` (plain text plus journal markers).
``journal-short``               ``Nov 29 08:08:05 host ident[pid]: msg`` (also
                                ``--no-hostname``; year-less, see below).
``journal-short-precise``       ``Nov 29 08:08:05.123456 host ident[pid]: msg``.
``journal-short-iso``           ``2026-11-29T08:08:05+0000 host ...`` (``+00:00`` too).
``journal-short-iso-precise``   ``2026-11-29T08:08:05.123456+0000 host ...``.
``journal-short-full``          ``Sun 2026-11-29 08:08:05 UTC host ident[pid]: msg``.
``journal-with-unit``           ``Sun 2026-11-29 08:08:05 UTC host unit[pid]: msg``.
``journal-short-unix``          ``1795939685.000000 host ident[pid]: msg``.
``journal-short-monotonic``     ``[    5.000000] host ident[pid]: msg`` (no wall clock).
``journal-short-delta``         ``[    5.000000 <    0.000000>] host ...`` (no wall clock).
``journal-json``                ``-o json`` (one object per line).
``journal-json-seq``            ``-o json-seq`` (RS before each object).
``journal-json-sse``            ``-o json-sse`` (``data: {...}`` lines).
``journal-json-pretty``         ``-o json-pretty`` (objects over several lines).
``journal-export``              ``-o export`` (Journal Export Format, binary-safe).
``journal-verbose``             ``-o verbose``.
``docker``                      ``docker logs --timestamps``: ``2026-09-22T06:49:56.336833841Z msg``.
``compose``                     ``docker compose logs``: ``name  | msg`` (any number of services).
``kubectl``                     ``kubectl logs`` with ``--prefix`` (``[pod/NAME/CONTAINER] msg``)
                                and/or ``--timestamps``.
``ray``                         Ray actor prefix ``(Actor pid=N, ip=X) msg``.
``pylogging``                   ``2025-03-07 23:50:27,531 - name - INFO - msg``.
``docker-desktop``              Docker Desktop's copied local time ``2026-09-22 08:49:56 msg``.
==============================  =========================================================

The journalctl mode names themselves (``short``, ``short-iso``, ``json``, ``export``,
``cat``, ``with-unit``, ...) are accepted as aliases of the ``journal-*`` names.

Record semantics (see :mod:`logparse.sources.records`):

* ``text`` is the SGLang line with every outer prefix removed; ``\\r`` inside a line
  (tqdm) and ANSI codes are kept; a trailing ``\\r`` is removed only in CRLF files.
* One record per physical line, except: a journal entry in ``json*``/``export``/
  ``verbose`` is one record (whatever the number of lines it spans), plus one more per
  further line of a multi-line MESSAGE (same metadata, same ``line_no``: the line where
  the entry starts).  In ``short*`` renderings the continuation lines of a multi-line
  MESSAGE are physical lines, and get the metadata of their entry.
* Markers (``-- Boot <id> --``, ``-- Reboot --``, ``-- Logs begin at ... --``,
  ``-- Journal begins at ... --``, ``-- No entries --``, ``-- cursor: ...``, ``Hint: ...``
  and its indented lines) are ``marker=True`` records whose text is the line.
* Lost text (``"MESSAGE":null``, ``[NNNB blob data]``) is ``text=None`` with ``problem``
  set, and a warning (one per kind, with a count) in ``Source.warnings``.
* ``unit``: ``_SYSTEMD_UNIT`` (json/export/verbose, ``with-unit``); in the other short
  modes the syslog identifier (``python3``), which is all they show.  systemd's own lines
  about a unit ("Started x.service ...") get that unit.  compose: the service name as
  printed (``sglang-1``); kubectl: ``POD/CONTAINER``.
* ``boot``: ``_BOOT_ID`` in json/export/verbose; in short* modes the id of the last
  ``-- Boot <id> --`` marker (None before the first; ``reboot-N`` after old-style
  ``-- Reboot --`` markers).
* ``pid``: the journal ``_PID``/``[pid]``; a Ray prefix's ``pid=`` overrides it.
* ``ts``: epoch seconds UTC.  Zone-less times (short, short-precise, Docker Desktop,
  Python logging wrappers) are read as UTC.  ``short``/``short-precise`` have no year: it
  is taken from the nearest SGLang timestamp (``[2026-11-29 08:09:11] ...``, looking ahead
  at most 20000 records), else from the file's mtime (stdin: today), with December ->
  January rollover; each such record has a note saying which.  short-monotonic/delta:
  ``ts=None``.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import IO

from logparse.sources.records import Record

from ._journal import VERBOSE_HDR_RE, export_records, looks_like_export, verbose_records
from ._lines import COMPOSE_RE, LineParser
from ._time import day_epoch

__all__ = [
    "CHUNK_SIZE",
    "FORMATS",
    "InputError",
    "Source",
    "journal_source",
    "open_inputs",
    "text_source",
]

#: Read size for streaming inputs: bounded memory whatever the input size.
CHUNK_SIZE = 1 << 20
#: How much of an input is looked at to detect its format.
SNIFF_BYTES = 64 << 10
#: A line longer than this is cut (memory bound); the pieces become separate records.
MAX_LINE = 64 << 20

#: Every accepted ``input_format`` name.
FORMATS: tuple[str, ...] = (
    "plain",
    "raw",
    "journal-cat",
    "journal-short",
    "journal-short-precise",
    "journal-short-iso",
    "journal-short-iso-precise",
    "journal-short-full",
    "journal-with-unit",
    "journal-short-unix",
    "journal-short-monotonic",
    "journal-short-delta",
    "journal-json",
    "journal-json-seq",
    "journal-json-sse",
    "journal-json-pretty",
    "journal-export",
    "journal-verbose",
    "docker",
    "compose",
    "kubectl",
    "ray",
    "pylogging",
    "docker-desktop",
)
_ALIASES = {
    "auto": None,
    "cat": "journal-cat",
    "short": "journal-short",
    "short-precise": "journal-short-precise",
    "short-iso": "journal-short-iso",
    "short-iso-precise": "journal-short-iso-precise",
    "short-full": "journal-short-full",
    "with-unit": "journal-with-unit",
    "short-unix": "journal-short-unix",
    "short-monotonic": "journal-short-monotonic",
    "short-delta": "journal-short-delta",
    "json": "journal-json",
    "json-seq": "journal-json-seq",
    "json-sse": "journal-json-sse",
    "json-pretty": "journal-json-pretty",
    "export": "journal-export",
    "verbose": "journal-verbose",
    "docker-compose": "compose",
    "k8s": "kubectl",
    "kubernetes": "kubectl",
}

NOTE_YEAR_SGLANG = "year from the SGLang timestamp"
NOTE_YEAR_MTIME = "year from the file's modification time"
NOTE_YEAR_NOW = "year from the current date (no file time)"
#: Records held back while looking for an SGLang timestamp to date year-less lines.
MAX_YEAR_LOOKAHEAD = 20_000
MAX_YEAR_LOOKAHEAD_BYTES = 32 << 20

_WARNINGS = {
    "null": "{n} journal message{s} printed as null by journalctl -o json (fields of 4 KiB or "
    "more are dropped without --all, e.g. server_args=): text lost; rerun journalctl "
    "with --all, or use -o export",
    "blob": "{n} journal message{s} printed as '[NB blob data]' (control characters or invalid "
    "UTF-8, e.g. tqdm progress bars): text lost; rerun journalctl with --all (-a), or "
    "use -o export",
    "invalid-json": "{n} line{s} of a journal JSON rendering {are} not valid JSON: read as plain text",
    "export-text": "{n} line{s} of a journal export stream {are} not journal fields: read as plain text",
    "long-line": "{n} line{s} longer than 64 MiB {were} cut into pieces",
    "corrupt": "the compressed data is corrupt or truncated after {n} decompressed byte{s}: "
    "the rest of the input is lost",
}


class InputError(Exception):
    """A problem with an input the user named; exit code 2."""


def _normalize_format(input_format: str | None) -> str | None:
    if input_format is None:
        return None
    f = input_format.strip().lower()
    if f in FORMATS:
        return f
    if f in _ALIASES:
        return _ALIASES[f]
    raise InputError(f"unknown input format {input_format!r}; valid formats: auto, " + ", ".join(FORMATS))


# ---------------------------------------------------------------------------------------
# Format detection


class _SniffStub:
    name = "<sniff>"

    def __init__(self):
        self.last_cursor: dict = {}

    def _problem(self, kind: str, n: int = 1) -> None:
        pass


def sniff_format(head: bytes, eof: bool = True) -> tuple[str, bool]:
    """(format name, CRLF line ends?) from the first bytes of an input."""
    lines = head.split(b"\n")
    crlf = len(lines) > 1 and lines[0].endswith(b"\r")
    if not eof and len(lines) > 1:
        lines.pop()  # partial last line
    if crlf:
        lines = [ln[:-1] if ln.endswith(b"\r") else ln for ln in lines]
    sample = [ln for ln in lines[:2000] if ln.strip()][:200]
    if not sample:
        return "plain", crlf
    body = [ln for ln in sample if not ln.startswith((b"-- ", b"Hint: ", b"      ", b"Warning: journal"))] or sample
    first = body[0]
    if first.startswith(b"\x1e"):
        return "journal-json-seq", crlf
    if first.startswith(b"data: {"):
        return "journal-json-sse", crlf
    if first[:1] == b"{":
        if first.strip() == b"{":
            return "journal-json-pretty", crlf
        return "journal-json", crlf
    if looks_like_export(body[:6]):
        return "journal-export", crlf
    if VERBOSE_HDR_RE.match(first):
        return "journal-verbose", crlf
    body = body[:60]
    if sum(1 for ln in body if COMPOSE_RE.match(ln)) >= 0.6 * len(body):
        return "compose", crlf
    parser = LineParser(_SniffStub(), "plain")
    counts: Counter[str] = Counter()
    total = 0
    for i, ln in enumerate(body, 1):
        r = parser.parse(i, ln)
        for rec in r if isinstance(r, list) else [r] if r is not None else []:
            if rec.marker:
                continue
            total += 1
            if rec.fmt != "plain":
                counts[rec.fmt] += 1
    if counts and total:
        best, k = counts.most_common(1)[0]
        if k >= 0.3 * total:
            return best, crlf
    if any(
        ln.startswith((b"-- Boot ", b"-- Logs begin at", b"-- Journal begins at", b"-- No entries --")) for ln in sample
    ):
        return "journal-cat", crlf
    return "plain", crlf


# ---------------------------------------------------------------------------------------
# Year inference for short / short-precise


class _YearResolver:
    """Completes year-less timestamps (a ``(month, day, seconds)`` tuple in ``Record.ts``).

    The year comes from the nearest SGLang timestamp: records are held back until one is
    seen (at most :data:`MAX_YEAR_LOOKAHEAD`), then dated backwards from it; after it the
    year is carried forward, +1 when the month goes from December to January.  Without
    any SGLang timestamp the reference date (file mtime, else today) is used: a month/day
    after the reference belongs to the year before.
    """

    def __init__(self, ref: tuple[int, int, int], ref_note: str):
        self.ref = ref
        self.ref_note = ref_note
        self.year: int | None = None
        self.last_mon = 0
        self.note = ref_note
        self.pending: list[Record] = []
        self.pending_bytes = 0
        self._ym: dict[str, tuple[int, int]] = {}

    @staticmethod
    def _set(r: Record, year: int, note: str) -> None:
        mon, day, sod = r.ts
        r.ts = day_epoch(year, mon, day) + sod
        r.notes.append(note)

    def _ref_year(self, mon: int, day: int) -> int:
        ry, rm, rd = self.ref
        return ry if (mon, day) <= (rm, rd) else ry - 1

    def push(self, r: Record) -> list[Record]:
        t = r.ts
        if t.__class__ is not tuple:
            if self.pending:
                self.pending.append(r)
                self.pending_bytes += len(r.text) if r.text else 0
                if len(self.pending) > MAX_YEAR_LOOKAHEAD or self.pending_bytes > MAX_YEAR_LOOKAHEAD_BYTES:
                    return self._overflow()
                return []
            return [r]
        mon = t[0]
        text = r.text
        anchor = None
        if text and text[5:6] == "-" and text[0] == "[":
            ym = text[1:8]
            a = self._ym.get(ym)
            if a is None:
                a = (int(ym[:4]), int(ym[5:7])) if ym[:4].isdigit() and ym[5:7].isdigit() else (0, 0)
                if len(self._ym) > 1000:
                    self._ym.clear()
                self._ym[ym] = a
            ay, am = a
            if ay:
                anchor = ay + (1 if (mon == 1 and am == 12) else -1 if (mon == 12 and am == 1) else 0)
        if anchor is not None:
            out = self._backfill(anchor, mon) if self.pending else []
            self.year, self.last_mon, self.note = anchor, mon, NOTE_YEAR_SGLANG
            self._set(r, anchor, NOTE_YEAR_SGLANG)
            out.append(r)
            return out
        if self.year is not None:
            if self.last_mon - mon >= 6:
                self.year += 1
            elif mon - self.last_mon >= 6:
                self.year -= 1
            self.last_mon = mon
            self._set(r, self.year, self.note)
            return [r]
        self.pending.append(r)
        self.pending_bytes += len(text) if text else 0
        if len(self.pending) > MAX_YEAR_LOOKAHEAD or self.pending_bytes > MAX_YEAR_LOOKAHEAD_BYTES:
            return self._overflow()
        return []

    def _backfill(self, year: int, mon: int) -> list[Record]:
        out = self.pending
        self.pending = []
        self.pending_bytes = 0
        y, m = year, mon
        for r in reversed(out):
            t = r.ts
            if t.__class__ is tuple:
                if t[0] - m >= 6:
                    y -= 1
                elif m - t[0] >= 6:
                    y += 1
                m = t[0]
                self._set(r, y, NOTE_YEAR_SGLANG)
        return out

    def _overflow(self) -> list[Record]:
        out = self.finish()
        for r in reversed(out):  # carry the last dated year forward
            if r.ts is not None and r.notes and r.notes[-1] == self.ref_note:
                tm = time.gmtime(r.ts)
                self.year, self.last_mon, self.note = tm.tm_year, tm.tm_mon, self.ref_note
                break
        return out

    def finish(self) -> list[Record]:
        out = self.pending
        self.pending = []
        self.pending_bytes = 0
        for r in out:
            t = r.ts
            if t.__class__ is tuple:
                self._set(r, self._ref_year(t[0], t[1]), self.ref_note)
        return out


# ---------------------------------------------------------------------------------------
# Byte streams


class _Replay(io.RawIOBase):
    """The first block already read, then the rest of ``fh``; counts the raw bytes."""

    def __init__(self, first: bytes, fh, counter: Source):
        self._first = memoryview(first)
        self._fh = fh
        self._counter = counter

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if len(self._first):
            k = min(len(b), len(self._first))
            b[:k] = self._first[:k]
            self._first = self._first[k:]
            return k
        data = self._fh.read(len(b))
        k = len(data)
        self._counter.bytes_read += k
        b[:k] = data
        return k


def _split_lines(chunks: Iterable[bytes], crlf: bool, source: Source) -> Iterator[list[bytes]]:
    """Lists of physical lines (without ``\\n``; without a trailing ``\\r`` in CRLF inputs)."""
    tail = b""
    for chunk in chunks:
        if tail:
            chunk = tail + chunk
        parts = chunk.split(b"\n")
        tail = parts.pop()
        if len(tail) > MAX_LINE:
            parts.append(tail)
            tail = b""
            source._problem("long-line")
        if crlf:
            parts = [p[:-1] if p[-1:] == b"\r" else p for p in parts]
        if parts:
            yield parts
    if tail:
        yield [tail[:-1] if crlf and tail[-1:] == b"\r" else tail]


# ---------------------------------------------------------------------------------------


class Source:
    """One input, read once as a stream of records.

    ``size`` and ``bytes_read`` count the input as stored (compressed bytes for .gz/.zst,
    so that ``bytes_read / size`` is progress); ``content_hash`` is the SHA-256 of the
    decompressed content.  ``warnings``: one human line per kind of data-quality problem,
    with a count.  ``last_cursor``: ``{(host, unit): __CURSOR}`` of the last entry read
    (json/export/verbose renderings and :func:`journal_source`).
    """

    def __init__(
        self,
        name: str,
        opener: Callable[[], IO[bytes]],
        fmt: str | None = None,
        size: int | None = None,
        mtime: float | None = None,
    ):
        self.name = name
        self._opener = opener
        self._fmt = _normalize_format(fmt)
        self._crlf = False
        self.size = size
        #: modification time of the file (year inference for year-less journal lines)
        self.mtime = mtime
        self.bytes_read = 0
        self._hash = hashlib.sha256()
        self.warnings: list[str] = []
        #: journald ``__CURSOR`` of the last entry read, per (host, unit)
        self.last_cursor: dict[tuple[str | None, str | None], str] = {}
        self._counts: dict[str, int] = {}
        self._warn_at: dict[str, int] = {}
        self._fh = None
        self._stream: Iterator[bytes] | None = None
        self._head: bytes | None = None
        self._started = False

    # -- public ------------------------------------------------------------------------
    @property
    def fmt(self) -> str:
        """The input format (requested, or sniffed from the first 64 KiB on first access)."""
        if self._fmt is None and not self._started:
            self._prepare()
        return self._fmt or "plain"

    @fmt.setter
    def fmt(self, value: str) -> None:
        self._fmt = _normalize_format(value)

    @property
    def content_hash(self) -> str:
        return self._hash.hexdigest()

    def records(self) -> Iterator[Record]:
        if self._started:
            raise RuntimeError(f"{self.name}: a Source can be read only once")
        self._prepare()
        self._started = True
        fmt = self._fmt
        chunks = chain((self._head,), self._stream)
        self._head = b""
        parser = LineParser(self, fmt)
        try:
            if fmt == "journal-export":
                yield from self._flatten(export_records(parser, chunks))
            elif fmt == "journal-verbose":
                yield from self._flatten(verbose_records(parser, self._numbered(chunks)))
            elif fmt == "raw":
                name = self.name
                n = 0
                for parts in _split_lines(chunks, self._crlf, self):
                    for raw in parts:
                        n += 1
                        yield Record(n, raw.decode("utf-8", "replace"), name, fmt="raw")
            else:
                yield from self._line_records(parser, chunks)
            self._done()
        finally:
            self._close()

    # -- internals -----------------------------------------------------------------------
    def _problem(self, kind: str, n: int = 1) -> None:
        """Count a data-quality problem; keep one warning line per kind, with the count."""
        c = self._counts.get(kind, 0) + n
        self._counts[kind] = c
        text = _WARNINGS[kind].format(
            n=c, s="" if c == 1 else "s", are="is" if c == 1 else "are", were="was" if c == 1 else "were"
        )
        text = f"{self.name}: {text}"
        i = self._warn_at.get(kind)
        if i is None:
            self._warn_at[kind] = len(self.warnings)
            self.warnings.append(text)
        else:
            self.warnings[i] = text

    def _open(self) -> IO[bytes]:
        return self._opener()

    def _close(self) -> None:
        fh = self._fh
        self._fh = None
        if fh is not None and fh is not getattr(sys.stdin, "buffer", None):
            with contextlib.suppress(OSError):
                fh.close()

    def _done(self) -> None:
        """Called after the last record (journalctl checks its exit status here)."""

    def _prepare(self) -> None:
        """Open the input, read the head, detect compression and format."""
        if self._head is not None or self._started:
            return
        stream = self._chunks()
        head = b""
        eof = False
        while len(head) < SNIFF_BYTES:
            chunk = next(stream, None)
            if chunk is None:
                eof = True
                break
            head += chunk
        if head.startswith(b"\xef\xbb\xbf"):
            head = head[3:]
        self._head = head
        self._stream = stream
        fmt, crlf = sniff_format(head, eof)
        self._crlf = crlf
        if self._fmt is None:
            self._fmt = fmt

    def _chunks(self) -> Iterator[bytes]:
        """Decompressed chunks of the input; hashes them and counts the stored bytes."""
        try:
            fh = self._open()
        except OSError as e:
            raise InputError(f"{self.name}: {e.strerror or e}") from None
        self._fh = fh
        return self._chunk_gen(fh)

    def _chunk_gen(self, fh) -> Iterator[bytes]:
        first = fh.read(CHUNK_SIZE) or b""
        while 0 < len(first) < 4:  # a pipe may deliver very little at first
            more = fh.read(CHUNK_SIZE)
            if not more:
                break
            first += more
        self.bytes_read += len(first)
        dec = None
        if first[:2] == b"\x1f\x8b":
            dec = gzip.GzipFile(fileobj=io.BufferedReader(_Replay(first, fh, self), CHUNK_SIZE), mode="rb")
        elif first[:4] == b"\x28\xb5\x2f\xfd":
            import zstandard

            dec = zstandard.ZstdDecompressor().stream_reader(
                io.BufferedReader(_Replay(first, fh, self), CHUNK_SIZE), read_across_frames=True
            )
        update = self._hash.update
        if dec is None:
            chunk = first
            while chunk:
                update(chunk)
                yield chunk
                chunk = fh.read(CHUNK_SIZE)
                self.bytes_read += len(chunk)
            return
        produced = 0
        # read1: one decompression step at a time, so that a truncated stream still
        # yields everything before the damage
        read = getattr(dec, "read1", dec.read)
        while True:
            try:
                chunk = read(CHUNK_SIZE)
            except Exception:  # gzip.BadGzipFile, EOFError, zlib.error, zstandard.ZstdError
                self._problem("corrupt", produced)
                return
            if not chunk:
                return
            produced += len(chunk)
            update(chunk)
            yield chunk

    def _numbered(self, chunks: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
        n = 0
        for parts in _split_lines(chunks, self._crlf, self):
            for raw in parts:
                n += 1
                yield n, raw

    def _year_resolver(self) -> _YearResolver:
        if self.mtime is not None:
            tm = time.localtime(self.mtime)
            return _YearResolver((tm.tm_year, tm.tm_mon, tm.tm_mday), NOTE_YEAR_MTIME)
        tm = time.localtime()
        return _YearResolver((tm.tm_year, tm.tm_mon, tm.tm_mday), NOTE_YEAR_NOW)

    def _flatten(self, items: Iterable) -> Iterator[Record]:
        resolver = None
        for r in items:
            rs = r if r.__class__ is list else (r,)
            for rec in rs:
                if rec.ts.__class__ is tuple or resolver is not None:
                    if resolver is None:
                        resolver = self._year_resolver()
                    yield from resolver.push(rec)
                else:
                    yield rec
        if resolver is not None:
            yield from resolver.finish()

    def _line_records(self, parser: LineParser, chunks: Iterable[bytes]) -> Iterator[Record]:
        name = self.name
        R = Record
        n = 0
        resolver = None
        parse = parser.parse
        fast = parser.fast
        for parts in _split_lines(chunks, self._crlf, self):
            for raw in parts:
                n += 1
                # hot path: an SGLang line "[YYYY-..." with no outer layer and no pending state
                if fast and raw[5:6] == b"-" and raw[0] == 91:
                    yield R(n, raw.decode("utf-8", "replace"), name)
                    continue
                r = parse(n, raw)
                fast = parser.fast
                if r is None:
                    continue
                if parser.yearless:
                    if resolver is None:
                        resolver = self._year_resolver()
                    if r.__class__ is R:
                        yield from resolver.push(r)
                    else:
                        for rec in r:
                            yield from resolver.push(rec)
                elif r.__class__ is R:
                    yield r
                else:
                    yield from r
        rest = parser.finish()
        for rec in rest:
            if resolver is not None:
                yield from resolver.push(rec)
            else:
                yield rec
        if resolver is not None:
            yield from resolver.finish()


class _JournalctlSource(Source):
    """``journalctl -o export --all ...`` run as a subprocess, its stdout read as a stream."""

    def __init__(self, name: str, argv: list[str]):
        super().__init__(name, self._start, "journal-export")
        self._argv = argv
        self._proc: subprocess.Popen | None = None
        self._stderr = None

    def _start(self) -> IO[bytes]:
        self._stderr = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                self._argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr
            )
        except FileNotFoundError:
            raise InputError("journalctl not found: install systemd or pass a saved rendering file") from None
        except OSError as e:
            raise InputError(f"cannot run journalctl: {e}") from None
        return self._proc.stdout

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read(65536).decode("utf-8", "replace")

    def _done(self) -> None:
        proc = self._proc
        if proc is None:
            return
        rc = proc.wait()
        err = self._stderr_text().strip()
        if rc != 0:
            first = err.splitlines()[0] if err else f"exit status {rc}"
            raise InputError(f"{self.name}: {first}")
        for line in err.splitlines():
            if line.strip():
                self.warnings.append(f"{self.name}: {line.strip()}")

    def _close(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        super()._close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


def journal_source(
    unit: str | None = None,
    since: str | None = None,
    until: str | None = None,
    directory: str | os.PathLike | None = None,
    file: str | os.PathLike | Sequence[str | os.PathLike] | None = None,
    after_cursor: str | None = None,
    extra_args: Sequence[str] = (),
) -> Source:
    """A source reading ``journalctl -o export --all`` (nothing lost, binary-safe).

    ``unit`` -> ``-u``, ``since``/``until`` -> ``--since``/``--until``, ``directory`` ->
    ``-D``, ``file`` -> ``--file`` (one or several), ``after_cursor`` -> ``--after-cursor``
    (resume from ``Source.last_cursor``).  Raises :class:`InputError` when journalctl is
    missing; a non-zero exit raises it at the end of ``records()`` with journalctl's
    first stderr line.
    """
    exe = shutil.which("journalctl")
    if exe is None:
        raise InputError("journalctl not found: install systemd or pass a saved rendering file")
    argv = [exe, "--no-pager", "-o", "export", "--all"]
    if unit:
        argv += ["-u", unit]
    if since:
        argv += ["--since", since]
    if until:
        argv += ["--until", until]
    if directory:
        argv += ["-D", os.fspath(directory)]
    if file:
        files = [file] if isinstance(file, (str, os.PathLike)) else list(file)
        for f in files:
            argv += ["--file", os.fspath(f)]
    if after_cursor:
        argv += ["--after-cursor", after_cursor]
    argv += [str(a) for a in extra_args]
    name = "journalctl " + " ".join(shlex.quote(a) for a in argv[1:])
    return _JournalctlSource(name, argv)


def _open_file(path: Path):
    def opener() -> IO[bytes]:
        return open(path, "rb")

    return opener


def _file_source(path: Path, fmt: str | None) -> Source:
    try:
        st = path.stat()
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from None
    if not os.access(path, os.R_OK):
        raise InputError(f"{path}: permission denied")
    return Source(str(path), _open_file(path), fmt, st.st_size, st.st_mtime)


#: In a directory walk, files that are documentation or code, not logs (a file named
#: explicitly is always read).
_NOT_LOGS = frozenset({".md", ".rst", ".py", ".pyc", ".sh", ".toml", ".cfg", ".ini", ".yaml", ".yml"})


def _looks_like_log(f: Path, top: Path) -> bool:
    rel = f.relative_to(top).parts
    if any(part.startswith(".") for part in rel):  # hidden files and folders (.git, .cache)
        return False
    return f.suffix.lower() not in _NOT_LOGS


def open_inputs(paths: Sequence[str], input_format: str | None = None) -> Iterator[Source]:
    fmt = _normalize_format(input_format)  # unknown name -> InputError before any input
    for p in paths:
        if p == "-":
            yield Source("-", lambda: sys.stdin.buffer, fmt)
            continue
        path = Path(p)
        if not path.exists():
            raise InputError(f"{p}: no such file or directory")
        if path.is_dir():
            try:
                files = sorted(f for f in path.rglob("*") if f.is_file() and _looks_like_log(f, path))
            except OSError as e:
                raise InputError(f"{p}: {e.strerror}") from None
            if not files:
                raise InputError(f"{p}: directory holds no log files")
            for f in files:
                yield _file_source(f, fmt)
            continue
        yield _file_source(path, fmt)


def text_source(name: str, text: str | bytes, input_format: str | None = None, mtime: float | None = None) -> Source:
    """A source over an in-memory string (tests, the Python API)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return Source(name, lambda: io.BytesIO(data), input_format, len(data), mtime)

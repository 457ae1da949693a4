"""Sources: bytes to records.

Public API (used by the pipeline, the CLI and the store):

* ``open_inputs(paths, input_format=None)`` yields one :class:`Source` per input
  (a file, every regular file below a directory in sorted order, ``-`` for stdin).
  ``.gz`` and ``.zst`` content is decompressed (recognised by its magic bytes).  A binary
  file met in a directory walk (a ``.journal`` file, an image, a database) is not read:
  its source yields no records, sets ``skipped`` and says so in one warning.
* ``journal_source(unit=None, since=None, until=None, directory=None, file=None,
  after_cursor=None, extra_args=())`` runs ``journalctl -o export --all`` with those
  filters and reads its output as a stream.
* ``text_source(name, text, input_format=None)``: a source over an in-memory string.
* ``sniff_format(head)``: the format of an input from its first bytes.
* :class:`InputError` is raised for a problem with an input the user named
  (missing path, unreadable file, a directory without files, an unknown format name,
  journalctl missing or failing): the CLI turns it into one line on stderr and exit
  code 2.

A :class:`Source` is read once, as a stream, through ``records()`` (or, for a reader that
splits lines itself, ``open_content()``); the content hash, byte count, ``warnings`` and
``last_cursor`` are complete once it is exhausted.  ``fmt`` is known before reading (the
first 64 KiB are sniffed on first access, :mod:`.sniff`).

Input formats: one module each in :mod:`logparse.sources.formats`, whose docstring gives
the format, sample lines and the record fields it yields; ``FORMATS`` lists their names
(``plain``, ``raw``, ``journal-cat``, ``journal-short``, ``journal-short-precise``,
``journal-short-iso``, ``journal-short-iso-precise``, ``journal-short-full``,
``journal-with-unit``, ``journal-short-unix``, ``journal-short-monotonic``,
``journal-short-delta``, ``journal-json``, ``journal-json-seq``, ``journal-json-sse``,
``journal-json-pretty``, ``journal-export``, ``journal-verbose``, ``docker``, ``compose``,
``kubectl``, ``ray``, ``pylogging``, ``docker-desktop``).  journalctl's own mode names
(``short``, ``short-iso``, ``json``, ``export``, ``cat``, ``with-unit``, ...) are aliases.
By default each input is sniffed from its first lines, and every line is still examined
on its own (:mod:`.lines`), so inputs that mix formats work.

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
  is taken from the nearest SGLang timestamp, else from the file's mtime (stdin: today),
  with December -> January rollover; each such record has a note saying which
  (:mod:`.years`).  short-monotonic/delta: ``ts=None``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil  # noqa: F401  (tests replace shutil.which through this module)
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import IO

from logparse.sources import journalctl, streams
from logparse.sources.errors import InputError
from logparse.sources.formats import FORMATS
from logparse.sources.formats.journal_export import ExportReader
from logparse.sources.formats.journal_verbose import VerboseReader
from logparse.sources.lines import LineParser
from logparse.sources.records import Record
from logparse.sources.sniff import binary_kind, normalize_format, sniff_format
from logparse.sources.years import year_resolver
from logparse.text import valid_text

__all__ = [
    "CHUNK_SIZE",
    "FORMATS",
    "InputError",
    "LineParser",
    "Record",
    "Source",
    "SourceContent",
    "journal_source",
    "open_inputs",
    "sniff_format",
    "text_source",
    "unreadable",
]

# Limits, read when a source is read (tests lower them through this module).
#: Read size for streaming inputs: bounded memory whatever the input size.
CHUNK_SIZE = 1 << 20
#: How much of an input is looked at to detect its format.
SNIFF_BYTES = 64 << 10
#: A line longer than this is cut into pieces of this size, each a line of its own (memory bound;
#: the grammar reads no line over 2,000,000 characters: ``grammar.classify.MAX_LINE``).
MAX_LINE = 4 << 20
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
    "long-line": "{n} line{s} longer than {limit} {were} cut into pieces of {limit}, each read as a line",
    "corrupt": "the compressed data is corrupt or truncated after {n} decompressed byte{s}: "
    "the rest of the input is lost",
}


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
        #: what every launch, warning and ``sources`` row calls the input (valid text: :mod:`logparse.text`)
        self.name = valid_text(name)
        #: the name as given: the path of a file input, to stat and open (may hold lone surrogates)
        self.path = name
        self._opener = opener
        self._fmt = normalize_format(fmt)
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
        self._fh: IO[bytes] | None = None
        self._stream: Iterator[bytes] | None = None
        self._head: bytes | None = None
        self._started = False
        #: skip the input when it is binary (a file met in a directory walk, not one named)
        self.skip_binary = False
        #: why the input was skipped without reading it (a binary file), else None
        self.skipped: str | None = None
        self._whole_in_head = False

    # -- public ------------------------------------------------------------------------
    @property
    def fmt(self) -> str:
        """The input format (requested, or sniffed from the first 64 KiB on first access)."""
        if self._fmt is None and not self._started:
            self._prepare()
        return self._fmt or "plain"

    @fmt.setter
    def fmt(self, value: str) -> None:
        self._fmt = normalize_format(value)

    @property
    def content_hash(self) -> str:
        return self._hash.hexdigest()

    def records(self) -> Iterator[Record]:
        """The records of the input, in order (the one way to read it, besides
        :meth:`open_content`)."""
        chunks = self._start_reading()
        fmt = self.fmt
        parser = LineParser(self, fmt)
        try:
            if fmt == "journal-export":
                yield from self._dated(ExportReader(parser, chunks).records())
            elif fmt == "journal-verbose":
                yield from self._dated(VerboseReader(parser, self._numbered(chunks)).records())
            elif fmt == "raw":
                yield from self._raw_records(chunks)
            else:
                yield from self._line_records(parser, chunks)
            self._done()
        finally:
            self._close()

    def known_size(self) -> int | None:
        """The input's size: the file's (compressed), else that of a stream (stdin) short enough
        to have ended within the sniffed head, else None (a long stream: its size is not known
        before it is read)."""
        if self.size is not None:
            return self.size
        if not self._started:
            self._prepare()
        if self._whole_in_head and self._head is not None:
            return len(self._head)
        return None

    def open_content(self) -> SourceContent:
        """The other way to read the input (once): its decompressed content as byte chunks,
        for a reader that splits lines itself (:mod:`logparse.engines.sglang.bulk`).  Use it as a
        context manager; call :meth:`SourceContent.end` after the last chunk."""
        return SourceContent(self, self._start_reading())

    def line_parser(self) -> LineParser:
        """A line parser for this input's format, reporting to this source: for the lines a
        reader of :meth:`open_content` hands back one by one."""
        return LineParser(self, self.fmt)

    def note_problem(self, kind: str, n: int = 1) -> None:
        """Count a data-quality problem; keep one warning line per kind, with the count."""
        c = self._counts.get(kind, 0) + n
        self._counts[kind] = c
        text = _WARNINGS[kind].format(
            n=c, s="" if c == 1 else "s", are="is" if c == 1 else "are", were="was" if c == 1 else "were", limit=_mib()
        )
        text = f"{self.name}: {text}"
        i = self._warn_at.get(kind)
        if i is None:
            self._warn_at[kind] = len(self.warnings)
            self.warnings.append(text)
        else:
            self.warnings[i] = text

    # -- opening and closing -------------------------------------------------------------
    def _start_reading(self) -> Iterator[bytes]:
        """The content's chunks (the sniffed head first); a source is read only once."""
        if self._started:
            raise RuntimeError(f"{self.name}: a Source can be read only once")
        self._prepare()
        self._started = True
        assert self._head is not None and self._stream is not None  # set by _prepare
        chunks: Iterator[bytes] = chain((self._head,), self._stream)
        self._head = b""
        if self.fmt == "journal-export":  # binary fields hold newlines of their own: its reader bounds them
            return chunks
        return streams.cut_long_lines(chunks, MAX_LINE, lambda: self.note_problem("long-line"))

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
        self._whole_in_head = eof
        self._stream = stream
        fmt, self._crlf = sniff_format(head, eof)
        what = binary_kind(head) if fmt != "journal-export" else None
        if what is not None and self.skip_binary:
            # one note instead of hundreds of unrecognized lines; the rest is not read
            self.skipped = f"not a log: {what}"
            self.warnings.append(f"{self.name}: skipped, {self.skipped}")
            self._head, self._stream = b"", iter(())
            self._close()
        elif what is not None:
            self.warnings.append(f"{self.name}: looks like {what}, not a log; read as text since it was named")
        if self._fmt is None:
            self._fmt = fmt

    def _open(self) -> IO[bytes]:
        return self._opener()

    def _done(self) -> None:
        """Called after the last record (journalctl checks its exit status here)."""

    def _close(self) -> None:
        fh = self._fh
        self._fh = None
        if fh is not None and fh is not getattr(sys.stdin, "buffer", None):
            with contextlib.suppress(OSError):
                fh.close()

    # -- bytes ---------------------------------------------------------------------------
    def _chunks(self) -> Iterator[bytes]:
        """Decompressed chunks of the input; hashes them and counts the stored bytes."""
        try:
            fh = self._open()
        except OSError as e:
            raise InputError(f"{self.name}: {e.strerror or e}") from None
        self._fh = fh
        return self._hashed(self._decompressed(fh))

    def _decompressed(self, fh: IO[bytes]) -> Iterator[bytes]:
        first = streams.read_first(fh, CHUNK_SIZE)
        self.bytes_read += len(first)
        dec = streams.decompressor(first, fh, self, CHUNK_SIZE)
        if dec is not None:
            yield from streams.decompressed_chunks(dec, CHUNK_SIZE, lambda n: self.note_problem("corrupt", n))
            return
        chunk = first
        while chunk:
            yield chunk
            chunk = fh.read(CHUNK_SIZE)
            self.bytes_read += len(chunk)

    def _hashed(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        update = self._hash.update
        try:
            for chunk in chunks:
                update(chunk)
                yield chunk
        except OSError as e:  # a read that fails (EIO: a bad disk, a dead mount): the input is not read
            what = e.strerror or str(e)
            raise InputError(f"{self.name}: {what} (reading failed after {self.bytes_read:,} bytes)") from None

    def _lines(self, chunks: Iterable[bytes]) -> Iterator[list[bytes]]:
        return streams.split_lines(chunks, self._crlf)

    def _numbered(self, chunks: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
        n = 0
        for parts in self._lines(chunks):
            for raw in parts:
                n += 1
                yield n, raw

    # -- records -------------------------------------------------------------------------
    def _raw_records(self, chunks: Iterable[bytes]) -> Iterator[Record]:
        name = self.name
        for n, raw in self._numbered(chunks):
            yield Record(n, raw.decode("utf-8", "replace"), name, fmt="raw")

    def _year_resolver(self):
        return year_resolver(self.mtime, MAX_YEAR_LOOKAHEAD, MAX_YEAR_LOOKAHEAD_BYTES)

    def _dated(self, items: Iterable[Record | list[Record]]) -> Iterator[Record]:
        """The records of a structured reader, year-less times completed (a stray short line)."""
        resolver = None
        for r in items:
            for rec in r if isinstance(r, list) else (r,):
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
        for parts in self._lines(chunks):
            for raw in parts:
                n += 1
                # hot path: an SGLang line "[YYYY-mm-dd HH..." with no outer layer and no pending state
                # (a Buildkite stamp "[YYYY-mm-ddTHH...Z] " is an outer layer: the space tells them apart)
                if fast and raw[5:6] == b"-" and raw[0] == 91 and raw[11:12] == b" ":
                    yield R(n, raw.decode("utf-8", "replace"), name)
                    continue
                r = parse(n, raw)
                fast = parser.fast
                if r is None:
                    continue
                if parser.yearless:
                    if resolver is None:
                        resolver = self._year_resolver()
                    for rec in (r,) if isinstance(r, R) else r:
                        yield from resolver.push(rec)
                elif isinstance(r, R):
                    yield r
                else:
                    yield from r
        for rec in parser.finish():
            if resolver is not None:
                yield from resolver.push(rec)
            else:
                yield rec
        if resolver is not None:
            yield from resolver.finish()


def _mib() -> str:
    return f"{MAX_LINE / (1 << 20):g} MiB" if MAX_LINE >= 1 << 20 else f"{MAX_LINE:,} bytes"


class SourceContent:
    """A source's decompressed content, read once by a reader that splits lines itself.

    ``chunks``: the content as byte chunks; ``crlf``: whether lines end in CRLF (sniffed);
    ``fmt``: the source's format.  After the last chunk call :meth:`end` (journalctl's exit
    status is checked there: InputError); leaving the ``with`` block closes the input."""

    def __init__(self, source: Source, chunks: Iterator[bytes]) -> None:
        self.source = source
        self.chunks = chunks
        self.crlf = source._crlf
        self.fmt = source.fmt

    def end(self) -> None:
        self.source._done()

    def __enter__(self) -> SourceContent:
        return self

    def __exit__(self, *exc) -> None:
        self.source._close()


class _JournalctlSource(Source):
    """``journalctl -o export --all ...`` run as a subprocess, its stdout read as a stream."""

    def __init__(self, name: str, argv: list[str]):
        self._process = journalctl.JournalctlProcess(name, argv)
        super().__init__(name, self._process.start, "journal-export")

    @property
    def _proc(self):
        """The journalctl process (None before reading)."""
        return self._process.proc

    def _done(self) -> None:
        self.warnings.extend(self._process.finish())

    def _close(self) -> None:
        self._process.stop()
        super()._close()
        self._process.close_stderr()


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
    argv = journalctl.command(unit, since, until, directory, file, after_cursor, extra_args)
    return _JournalctlSource(journalctl.display_name(argv), argv)


def _file_source(path: Path, fmt: str | None) -> Source:
    try:
        st = path.stat()
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from None
    if not os.access(path, os.R_OK):
        raise InputError(f"{path}: permission denied")
    refuse_device(str(path), st)
    return Source(str(path), lambda: open(path, "rb"), fmt, st.st_size, st.st_mtime)


def refuse_device(name: str, st: os.stat_result) -> None:
    """A device or a socket is no log: ``/dev/zero`` and ``/dev/urandom`` never end, and would be
    read until killed.  Regular files and pipes (``<(journalctl …)``, a FIFO) are read; so is
    ``/dev/null``, which is empty."""
    kind = "a character device" if stat.S_ISCHR(st.st_mode) else "a block device" if stat.S_ISBLK(st.st_mode) else None
    kind = kind or ("a socket" if stat.S_ISSOCK(st.st_mode) else None)
    if kind is None or _is_devnull(st):
        return
    raise InputError(f"{name}: {kind}, not a log file (give a file, or pipe a log into stdin)")


def _is_devnull(st: os.stat_result) -> bool:
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return (st.st_dev, st.st_ino, st.st_rdev) == (null.st_dev, null.st_ino, null.st_rdev)


#: In a directory walk, files that are documentation or code, not logs (a file named
#: explicitly is always read).
_NOT_LOGS = frozenset({".md", ".rst", ".py", ".pyc", ".sh", ".toml", ".cfg", ".ini", ".yaml", ".yml"})


def _looks_like_log(f: Path, top: Path) -> bool:
    rel = f.relative_to(top).parts
    if any(part.startswith(".") for part in rel):  # hidden files and folders (.git, .cache)
        return False
    return f.suffix.lower() not in _NOT_LOGS


def open_inputs(paths: Sequence[str], input_format: str | None = None, *, each: bool = False) -> Iterator[Source]:
    """The inputs of these paths (a directory: the log files under it, in name order).

    A path or file that cannot be read raises :class:`InputError`; with ``each``, it is an input of
    its own that raises it when read (:func:`unreadable`), so that a caller reading the inputs one
    at a time (``ingest``) still reads the others and can say which ones failed."""
    fmt = normalize_format(input_format)  # unknown name -> InputError before any input
    for p in paths:
        try:
            yield from _inputs_of(p, fmt, each)
        except InputError as e:
            if not each:
                raise
            yield unreadable(p, str(e))


def _inputs_of(p: str, fmt: str | None, each: bool) -> Iterator[Source]:
    if p == "-":
        with contextlib.suppress(OSError, ValueError, AttributeError):  # stdin from a device: < /dev/zero
            if not sys.stdin.isatty():
                refuse_device("stdin", os.fstat(sys.stdin.fileno()))
        yield Source("-", lambda: sys.stdin.buffer, fmt)
        return
    path = Path(p)
    if not path.exists():
        raise InputError(f"{p}: no such file or directory")
    if not path.is_dir():
        yield _file_source(path, fmt)
        return
    try:
        files = sorted(f for f in path.rglob("*") if f.is_file() and _looks_like_log(f, path))
    except OSError as e:
        raise InputError(f"{p}: {e.strerror}") from None
    if not files:
        raise InputError(f"{p}: directory holds no log files")
    for f in files:
        try:
            src = _file_source(f, fmt)
        except InputError as e:
            if not each:
                raise
            src = unreadable(str(f), str(e))
        src.skip_binary = True  # a binary file beside the logs: one note, not its bytes as lines
        yield src


def unreadable(name: str, message: str) -> Source:
    """An input that could not be opened: reading it raises :class:`InputError` with ``message``."""

    def fail() -> IO[bytes]:
        raise InputError(message)

    return Source(name, fail)


def text_source(name: str, text: str | bytes, input_format: str | None = None, mtime: float | None = None) -> Source:
    """A source over an in-memory string (tests, the Python API)."""
    data = valid_text(text).encode("utf-8") if isinstance(text, str) else text
    return Source(name, lambda: io.BytesIO(data), input_format, len(data), mtime)

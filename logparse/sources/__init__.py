"""Sources: bytes to records.

Public API (used by the pipeline, the CLI and the store):

* ``open_inputs(paths, input_format=None)`` yields one :class:`Source` per input
  (a file, every log file below a directory in a stable order, ``-`` for stdin).
* ``journal_source(...)`` runs ``journalctl`` with flags that lose nothing and
  reads its output as a stream.
* :class:`InputError` is raised for a problem with an input the user named
  (missing path, unreadable file, a directory without logs): the CLI turns it into
  one line on stderr and exit code 2.

A :class:`Source` is read once, as a stream, through ``records()``; the content hash
and byte count are complete once the iterator is exhausted.
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
from pathlib import Path
from typing import IO, Iterator, Sequence

from logparse.records import Record

#: Read size for streaming inputs: bounded memory whatever the input size.
CHUNK_SIZE = 1 << 20


class InputError(Exception):
    """A problem with an input the user named; exit code 2."""


class Source:
    """One input, read once as a stream of records."""

    def __init__(self, name: str, opener, fmt: str | None = None, size: int | None = None):
        self.name = name
        self._opener = opener
        self.fmt = fmt or "plain"
        self.size = size
        self.bytes_read = 0
        self._hash = hashlib.sha256()
        self.warnings: list[str] = []

    @property
    def content_hash(self) -> str:
        return self._hash.hexdigest()

    def _lines(self) -> Iterator[bytes]:
        """Physical lines (without the newline), hashing and counting bytes as they pass."""
        fh = self._opener()
        try:
            tail = b""
            while True:
                chunk = fh.read(CHUNK_SIZE)
                if not chunk:
                    break
                self._hash.update(chunk)
                self.bytes_read += len(chunk)
                buf = tail + chunk
                parts = buf.split(b"\n")
                tail = parts.pop()
                yield from parts
            if tail:
                yield tail
        finally:
            if fh is not sys.stdin.buffer:
                fh.close()

    def records(self) -> Iterator[Record]:
        name = self.name
        for n, raw in enumerate(self._lines(), 1):
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            yield Record(line_no=n, text=raw.decode("utf-8", "replace"), source=name, fmt="plain")


def _open_file(path: Path):
    def opener() -> IO[bytes]:
        return open(path, "rb")
    return opener


def open_inputs(paths: Sequence[str], input_format: str | None = None) -> Iterator[Source]:
    for p in paths:
        if p == "-":
            yield Source("-", lambda: sys.stdin.buffer, input_format)
            continue
        path = Path(p)
        if not path.exists():
            raise InputError(f"{p}: no such file or directory")
        if path.is_dir():
            files = sorted(f for f in path.rglob("*") if f.is_file())
            if not files:
                raise InputError(f"{p}: directory holds no log files")
            for f in files:
                yield Source(str(f), _open_file(f), input_format, f.stat().st_size)
            continue
        if not os.access(path, os.R_OK):
            raise InputError(f"{p}: permission denied")
        yield Source(str(path), _open_file(path), input_format, path.stat().st_size)


def text_source(name: str, text: str | bytes) -> Source:
    """A source over an in-memory string (tests, the Python API)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return Source(name, lambda: io.BytesIO(data), None, len(data))

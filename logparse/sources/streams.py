"""Bytes in: decompression and line splitting, in bounded memory.

``.gz`` and ``.zst`` content is recognised by its magic bytes (not the file name) and
decompressed as a stream; a truncated or corrupt stream yields everything before the
damage.  Lines are cut at ``\\n``; a line longer than the limit is cut into pieces.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Protocol

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class ByteCounter(Protocol):
    #: bytes of the input as stored (compressed), for progress
    bytes_read: int


class ReplayReader(io.RawIOBase):
    """The first block already read, then the rest of ``fh``; counts the raw bytes."""

    def __init__(self, first: bytes, fh: IO[bytes], counter: ByteCounter):
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


def read_first(fh: IO[bytes], chunk_size: int) -> bytes:
    """The first block of an input: at least the 4 bytes of a compression magic, unless the
    input is shorter (a pipe may deliver very little at first)."""
    first = fh.read(chunk_size) or b""
    while 0 < len(first) < 4:
        more = fh.read(chunk_size)
        if not more:
            break
        first += more
    return first


def decompressor(first: bytes, fh: IO[bytes], counter: ByteCounter, chunk_size: int):
    """A reader of the decompressed content when ``first`` starts with gzip's or zstd's magic
    bytes, else None (the input is not compressed)."""
    if first[:2] == GZIP_MAGIC:
        import gzip

        return gzip.GzipFile(fileobj=io.BufferedReader(ReplayReader(first, fh, counter), chunk_size), mode="rb")
    if first[:4] == ZSTD_MAGIC:
        import zstandard

        return zstandard.ZstdDecompressor().stream_reader(
            io.BufferedReader(ReplayReader(first, fh, counter), chunk_size), read_across_frames=True
        )
    return None


def decompressed_chunks(dec, chunk_size: int, on_corrupt: Callable[[int], None]) -> Iterator[bytes]:
    """Chunks of a decompressor; ``on_corrupt(bytes produced)`` at the first damage."""
    produced = 0
    # read1: one decompression step at a time, so that a truncated stream still yields
    # everything before the damage
    read = getattr(dec, "read1", dec.read)
    while True:
        try:
            chunk = read(chunk_size)
        except Exception:  # gzip.BadGzipFile, EOFError, zlib.error, zstandard.ZstdError
            on_corrupt(produced)
            return
        if not chunk:
            return
        produced += len(chunk)
        yield chunk


def gathered(chunks: Iterable[bytes], size: int) -> Iterator[tuple[bytes, bool]]:
    """The chunks joined into pieces of at least ``size`` bytes, each with whether it is the last
    (the last one, holding whatever is left, may be shorter or empty; it always comes)."""
    pending: list[bytes] = []
    held = 0
    for chunk in chunks:
        if not chunk:
            continue
        pending.append(chunk)
        held += len(chunk)
        if held >= size:
            yield b"".join(pending), False
            pending, held = [], 0
    yield b"".join(pending), True


def split_lines(
    chunks: Iterable[bytes], crlf: bool, max_line: int, on_long_line: Callable[[], None]
) -> Iterator[list[bytes]]:
    """Lists of physical lines (without ``\\n``; without a trailing ``\\r`` in CRLF inputs)."""
    tail = b""
    for chunk in chunks:
        if tail:
            chunk = tail + chunk
        parts = chunk.split(b"\n")
        tail = parts.pop()
        if len(tail) > max_line:
            parts.append(tail)
            tail = b""
            on_long_line()
        if crlf:
            parts = [p[:-1] if p[-1:] == b"\r" else p for p in parts]
        if parts:
            yield parts
    if tail:
        yield [tail[:-1] if crlf and tail[-1:] == b"\r" else tail]

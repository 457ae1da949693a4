"""Bytes in: decompression and line splitting, in bounded memory.

``.gz`` and ``.zst`` content is recognised by its magic bytes (not the file name) and
decompressed as a stream; a truncated or corrupt stream yields everything before the
damage, and says so (zstandard's stream reader ends a truncated frame without a word:
:class:`ZstdFrames` follows the frames as their bytes pass and tells).  The decompressor is asked
for one chunk at a time (``read1``), so what it holds is bounded by the chunk size whatever the
ratio of expansion.  Lines are cut at ``\\n``; a line longer than the limit is cut into pieces of
the limit (:func:`cut_long_lines`) before anyone splits or gathers the content.
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
    """The first block already read, then the rest of ``fh``; counts the raw bytes (and hands
    them to ``watch``, when given)."""

    def __init__(self, first: bytes, fh: IO[bytes], counter: ByteCounter, watch: Callable[[bytes], None] | None = None):
        self._first = memoryview(first)
        self._fh = fh
        self._counter = counter
        self._watch = watch
        if watch is not None:
            watch(first)

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
        if self._watch is not None:
            self._watch(data)
        b[:k] = data
        return k


#: zstd's skippable frames: magic 0x184D2A50 to 0x184D2A5F (little-endian), then a 4-byte size.
_SKIPPABLE = frozenset(bytes([0x50 + i, 0x2A, 0x4D, 0x18]) for i in range(16))
#: Bytes of the frame header after its descriptor: dictionary id by its flag, content size by its flag.
_DICT_ID_BYTES = (0, 1, 2, 4)
_CONTENT_SIZE_BYTES = (0, 2, 4, 8)


class ZstdFrames:
    """The frames of a zstd stream followed as its compressed bytes pass (RFC 8878: frame header,
    block headers, checksum), without decompressing: :attr:`complete` says whether the bytes so
    far end where a frame ends.  A few bytes are held at a time; block contents are skipped."""

    def __init__(self) -> None:
        self._held = b""
        self._want = 4  # bytes of the next header piece
        self._skip = 0  # bytes of content to pass over first
        self._state = "magic"
        self._checksum = 0
        self._data_frames = 0  # a stream of skippable frames only (pzstd's first, cut) holds nothing

    @property
    def complete(self) -> bool:
        """The input ends between frames (or is something this walker does not follow: the
        decompressor reports that)."""
        if self._state == "lost":
            return True
        return self._state == "magic" and not self._held and not self._skip and self._data_frames > 0

    def feed(self, data: bytes) -> None:
        pos, n = 0, len(data)
        while self._state != "lost":
            if self._skip:
                k = min(self._skip, n - pos)
                self._skip -= k
                pos += k
                if self._skip:
                    return
            take = min(self._want - len(self._held), n - pos)
            self._held += data[pos : pos + take]
            pos += take
            if len(self._held) < self._want:
                return
            piece, self._held = self._held, b""
            self._step(piece)

    def _step(self, piece: bytes) -> None:
        state = self._state
        if state == "magic":
            if piece == ZSTD_MAGIC:
                self._state, self._want = "descriptor", 1
                self._data_frames += 1
            elif piece in _SKIPPABLE:
                self._state, self._want = "skippable", 4
            else:
                self._state = "lost"
        elif state == "skippable":
            self._skip = int.from_bytes(piece, "little")
            self._state, self._want = "magic", 4
        elif state == "descriptor":
            fhd = piece[0]
            single = fhd >> 5 & 1
            fcs = _CONTENT_SIZE_BYTES[fhd >> 6] or single  # flag 0: 1 byte in a single segment
            self._checksum = 4 if fhd & 4 else 0
            self._skip = (0 if single else 1) + _DICT_ID_BYTES[fhd & 3] + fcs
            self._state, self._want = "block", 3
        elif state == "block":
            header = int.from_bytes(piece, "little")
            kind, size = header >> 1 & 3, header >> 3
            self._skip = 1 if kind == 1 else size  # an RLE block holds one byte
            if header & 1:  # the last block: then the checksum, then the next frame
                self._skip += self._checksum
                self._state, self._want = "magic", 4


class _ZstdReader:
    """zstandard's stream reader over every frame of the input, which raises EOFError when the
    input ends inside a frame (a truncated file) instead of ending quietly."""

    def __init__(self, reader, frames: ZstdFrames) -> None:
        self._reader = reader
        self._frames = frames

    def read(self, n: int = -1) -> bytes:
        return self._checked(self._reader.read(n))

    def read1(self, n: int = -1) -> bytes:
        return self._checked(self._reader.read1(n))

    def _checked(self, chunk: bytes) -> bytes:
        if not chunk and not self._frames.complete:
            raise EOFError("the zstd stream ends inside a frame")
        return chunk

    def close(self) -> None:
        self._reader.close()


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
    if first[:4] == ZSTD_MAGIC or first[:4] in _SKIPPABLE:  # pzstd starts with a skippable frame
        import zstandard

        frames = ZstdFrames()
        raw = io.BufferedReader(ReplayReader(first, fh, counter, frames.feed), chunk_size)
        return _ZstdReader(zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True), frames)
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


def line_blocks(chunks: Iterable[bytes], size: int) -> Iterator[bytes]:
    """The chunks cut into blocks of whole lines of at least ``size`` bytes where lines allow
    (each without its final newline; the last holds what is left, its one trailing newline
    dropped, and comes unless nothing is left).  Each byte is copied once, into its block: the
    chunks are joined up to the last newline, and only the piece of a line after it is carried."""
    pending: list[bytes] = []
    fresh = 0  # bytes gathered since the last cut was tried (what :func:`gathered` would join)
    for chunk in chunks:
        if not chunk:
            continue
        pending.append(chunk)
        fresh += len(chunk)
        if fresh < size:
            continue
        fresh = 0
        k, cut = len(pending) - 1, -1
        while k >= 0 and (cut := pending[k].rfind(b"\n")) < 0:
            k -= 1
        if k < 0:
            continue  # a line longer than a block: gather on
        block = b"".join([*pending[:k], memoryview(pending[k])[:cut]])
        pending = [pending[k][cut + 1 :], *pending[k + 1 :]]
        yield block
    data = b"".join(pending)
    if data:  # the rest after the last cut; "\n" alone is one empty line, as the record path reads it
        yield data[:-1] if data.endswith(b"\n") else data


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


def cut_long_lines(chunks: Iterable[bytes], max_line: int, on_long_line: Callable[[], None]) -> Iterator[bytes]:
    """The chunks with a ``\\n`` put after every ``max_line`` bytes of a line that has not ended by
    then, so that no line of the content is longer than ``max_line`` bytes, whoever splits it (the
    record path's :func:`split_lines`, a bulk reader's blocks): a line is never held whole, and a
    flood without newlines (a file of NUL bytes, a decompression bomb) is read in bounded memory.
    The pieces do not depend on the chunks' sizes; ``on_long_line()`` once per line cut."""
    run = 0  # bytes of the current line so far
    cut = False  # the current line has been cut already
    for chunk in chunks:
        n = len(chunk)
        first = chunk.find(b"\n")
        if first < 0 and run + n <= max_line:
            run += n
            yield chunk
        elif first >= 0 and run + first <= max_line and n <= max_line:  # every line of it fits
            run, cut = n - 1 - chunk.rfind(b"\n"), False
            yield chunk
        else:
            ends, run, cut = _cuts(chunk, run, cut, max_line, on_long_line)
            yield b"\n".join([chunk[a:b] for a, b in zip([0, *ends], [*ends, n], strict=True)])


def _cuts(chunk: bytes, run: int, cut: bool, max_line: int, on_long_line: Callable[[], None]):
    """Where ``\\n`` goes into ``chunk``, given ``run`` bytes of its first line before it; the bytes
    of its last line, and whether that line is cut already."""
    ends: list[int] = []
    pos, n = 0, len(chunk)
    while pos < n:
        room = max_line - run
        nl = chunk.find(b"\n", pos, pos + room + 1)
        if nl >= 0:
            run, cut, pos = 0, False, nl + 1
            continue
        if pos + room >= n:
            run += n - pos
            break
        pos += room
        ends.append(pos)
        if not cut:
            on_long_line()
            cut = True
        run = 0
    return ends, run, cut


def split_lines(chunks: Iterable[bytes], crlf: bool) -> Iterator[list[bytes]]:
    """Lists of physical lines (without ``\\n``; without a trailing ``\\r`` in CRLF inputs).  A line
    is held until it ends: :func:`cut_long_lines` bounds it first."""
    tail: list[bytes] = []
    for chunk in chunks:
        if b"\n" not in chunk:  # a piece of a long line: joined once, when it ends
            if chunk:
                tail.append(chunk)
            continue
        if tail:
            tail.append(chunk)
            chunk = b"".join(tail)
        parts = chunk.split(b"\n")
        last = parts.pop()
        tail = [last] if last else []
        if crlf:
            parts = [p[:-1] if p[-1:] == b"\r" else p for p in parts]
        yield parts
    if tail:
        line = b"".join(tail)
        yield [line[:-1] if crlf and line[-1:] == b"\r" else line]

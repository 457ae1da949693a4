"""Following inputs that grow: a log file like ``tail -F``, the journal like ``journalctl -f``.

Bytes only (the store's ``watch`` decides what to parse and when):

* :class:`FileFollower` watches one path.  :meth:`FileFollower.check` says how far the file holds
  complete lines (``end``, an offset; a last line without its newline waits for it).  A file that
  is replaced under the same name (log rotation: a new inode) or cut shorter than what was read
  (``copytruncate``) starts a new *generation* read from its first byte, after the rest of the old
  file has been handed out; a path that vanished is waited for (the open descriptor keeps the old
  file readable meanwhile).  :meth:`FileFollower.reader` reads a byte range of the current
  generation, streaming, so a caller holds no more than a chunk.
* :class:`JournalFollower` runs ``journalctl -o export --all [-f] --after-cursor C`` and splits its
  output into whole entries (the export framing, binary fields included) on a reader thread, with
  a bounded queue between them.  When journalctl ends (journald restarted, the journal vacuumed) the
  caller sees :data:`ENDED` and starts another one from the last cursor it stored.
"""

from __future__ import annotations

import contextlib
import io
import os
import queue
import struct
import threading
from dataclasses import dataclass
from typing import IO

from logparse.sources import journalctl

#: Read size when scanning a file for its last complete line.
SCAN_CHUNK = 1 << 20
#: The queue between journalctl's reader thread and the caller: whole entries.
QUEUE_ENTRIES = 4096
#: :meth:`JournalFollower.get`'s answer once journalctl has ended and every entry was taken.
ENDED = b""


@dataclass
class Growth:
    """Complete lines of one generation of a followed file: bytes ``[start, end)``."""

    generation: int
    start: int
    end: int
    #: the file was replaced or cut: this generation starts at byte 0 (``start`` is 0)
    new_generation: bool = False


class FileFollower:
    """``tail -F`` for one path (see the module documentation)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        self.fd: int | None = None
        self.ino: tuple[int, int] | None = None
        self.end = 0  # bytes of the current generation handed out (whole lines)
        self.generation = 0
        self._pending_switch = False

    # -- state -----------------------------------------------------------------------------
    def _open(self) -> bool:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return False
        st = os.fstat(fd)
        self.close()
        self.fd, self.ino, self.end = fd, (st.st_dev, st.st_ino), 0
        return True

    def close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)

    def _path_identity(self) -> tuple[tuple[int, int] | None, int]:
        try:
            st = os.stat(self.path)
        except OSError:
            return None, 0
        return (st.st_dev, st.st_ino), st.st_size

    # -- growth ----------------------------------------------------------------------------
    def check(self) -> Growth | None:
        """New complete lines since the last call (None: nothing new, or no file yet)."""
        if self.fd is None:
            if not self._open():
                return None
            self.generation += 1
            return self._grown(new=True) or Growth(self.generation, 0, 0, new_generation=True)
        ident, size = self._path_identity()
        assert self.fd is not None
        if ident is not None and ident != self.ino:
            # rotated: hand out what the old file still holds (its last line even without a
            # newline), then the new file from its start
            rest = self._grown(final=True)
            if rest is not None:
                return rest
            if self._open():
                self.generation += 1
                return self._grown(new=True) or Growth(self.generation, 0, 0, new_generation=True)
            return None
        if ident is not None and size < self.end:  # cut shorter (copytruncate): read it again
            self.end = 0
            self.generation += 1
            return self._grown(new=True) or Growth(self.generation, 0, 0, new_generation=True)
        return self._grown()

    def _grown(self, *, new: bool = False, final: bool = False) -> Growth | None:
        assert self.fd is not None
        size = os.fstat(self.fd).st_size
        if size <= self.end:
            return None
        last_nl = self._last_newline(self.end, size)
        end = size if final else (last_nl + 1 if last_nl >= 0 else self.end)
        if end <= self.end:
            return None
        g = Growth(self.generation, self.end, end, new_generation=new)
        self.end = end
        return g

    def _last_newline(self, start: int, stop: int) -> int:
        """Offset of the last ``\\n`` in ``[start, stop)``, or -1 (scanned backwards in chunks)."""
        assert self.fd is not None
        hi = stop
        while hi > start:
            lo = max(start, hi - SCAN_CHUNK)
            i = os.pread(self.fd, hi - lo, lo).rfind(b"\n")
            if i >= 0:
                return lo + i
            hi = lo
        return -1

    # -- reading -----------------------------------------------------------------------------
    def reader(self, start: int, end: int) -> IO[bytes]:
        """A file object over bytes ``[start, end)`` of the current generation."""
        assert self.fd is not None
        return io.BufferedReader(_RangeReader(self.fd, start, end), SCAN_CHUNK)

    def count_lines(self, start: int, end: int) -> int:
        """Newlines in ``[start, end)``."""
        assert self.fd is not None
        n, pos = 0, start
        while pos < end:
            chunk = os.pread(self.fd, min(SCAN_CHUNK, end - pos), pos)
            if not chunk:
                break
            n += chunk.count(b"\n")
            pos += len(chunk)
        return n

    def offset_of_line(self, start: int, end: int, lines: int) -> int:
        """The offset just after the ``lines``-th newline counted from ``start`` (``end`` when fewer)."""
        assert self.fd is not None
        if lines <= 0:
            return start
        pos = start
        while pos < end:
            chunk = os.pread(self.fd, min(SCAN_CHUNK, end - pos), pos)
            if not chunk:
                break
            n = chunk.count(b"\n")
            if n >= lines:
                i = -1
                for _ in range(lines):
                    i = chunk.index(b"\n", i + 1)
                return pos + i + 1
            lines -= n
            pos += len(chunk)
        return end


class _RangeReader(io.RawIOBase):
    """``[start, end)`` of a file descriptor, read with ``pread`` (the descriptor's offset untouched)."""

    def __init__(self, fd: int, start: int, end: int) -> None:
        self.fd, self.pos, self.stop = fd, start, end

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = min(len(b), self.stop - self.pos)
        if n <= 0:
            return 0
        data = os.pread(self.fd, n, self.pos)
        b[: len(data)] = data
        self.pos += len(data)
        return len(data)


# ------------------------------------------------------------------------------------- journal


def split_export(fh: IO[bytes]):
    """Whole entries of a Journal Export Format stream (each ends with its blank line)."""
    entry = bytearray()
    while True:
        line = fh.readline()
        if not line:
            break
        if line == b"\n":
            if entry:
                yield bytes(entry) + b"\n"
                entry = bytearray()
            continue
        entry += line
        if b"=" not in line and line.endswith(b"\n"):  # a binary field: NAME\n <le64 size> data \n
            size = fh.read(8)
            entry += size
            if len(size) == 8:
                entry += fh.read(struct.unpack("<Q", size)[0] + 1)
    if entry:
        yield bytes(entry) + b"\n"


class JournalFollower:
    """``journalctl -o export --all [-f]`` read on a thread into a bounded queue of whole entries."""

    def __init__(
        self,
        unit: str | None = None,
        directory: str | None = None,
        file: str | None = None,
        after_cursor: str | None = None,
        *,
        follow: bool = True,
    ) -> None:
        extra = ["-f", "--no-tail"] if follow else []  # -f alone starts at the last 10 entries
        argv = journalctl.command(unit, None, None, directory, file, after_cursor, extra)
        self.name = journalctl.display_name([a for a in argv if a not in ("-f", "--no-tail")])
        self.process = journalctl.JournalctlProcess(self.name, argv)
        self.queue: queue.Queue[bytes] = queue.Queue(QUEUE_ENTRIES)
        self.warnings: list[str] = []
        self.error: str | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        out = self.process.start()
        self._thread = threading.Thread(target=self._read, args=(out,), daemon=True)
        self._thread.start()

    def _read(self, out: IO[bytes]) -> None:
        try:
            for entry in split_export(out):
                self.queue.put(entry)
        except (OSError, ValueError):
            pass
        finally:
            try:
                self.warnings += self.process.finish()
            except Exception as exc:  # InputError: journalctl failed
                self.error = str(exc)
            with contextlib.suppress(queue.Full):  # nobody reads any more (stopping)
                self.queue.put(ENDED, timeout=5)

    def get(self, timeout: float) -> bytes | None:
        """The next entry, :data:`ENDED` once journalctl ended, None when nothing came in ``timeout`` s."""
        try:
            return self.queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def stop(self) -> None:
        self.process.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.process.close_stderr()

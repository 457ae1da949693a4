"""Files logparse writes: whole or not at all, and readable by their owner only.

* **Atomic.**  Every file output (``--output``, ``report --html``, charts, Parquet) is written to a
  temporary file in the destination's folder and renamed over it once complete
  (:func:`write_atomic`, :class:`AtomicFile`): a full disk, a kill or an error leaves the previous
  file as it was, never a cut one.  (A rename within one folder is atomic on POSIX.)
* **Private.**  A store holds server arguments and log lines; its files, write-ahead log, exports
  and reports are created for their owner only: :func:`private_umask` makes every file this process
  creates 0600 and every folder 0700, unless the user's umask asks for less.  The Prometheus textfile
  is the exception (node_exporter runs as a user of its own: :mod:`logparse.cli.metrics_text`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Any

#: What :func:`private_umask` takes away: every permission of the group and of others.
PRIVATE_MASK = 0o077


def private_umask() -> int:
    """From now on, files this process creates are its owner's only (the user's own umask still
    applies on top).  Returns the umask in force before."""
    before = os.umask(PRIVATE_MASK)
    os.umask(before | PRIVATE_MASK)
    return before


def private_dir(path: Path) -> None:
    """Create ``path`` (and its parents) as folders of their owner only."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in its folder and a rename."""
    with AtomicFile(path, binary=isinstance(data, bytes)) as fh:
        fh.write(data)


class AtomicFile:
    """A file that takes the place of ``path`` when it is committed (``with``: when the block ends
    without an error), and leaves no trace when it is aborted."""

    def __init__(self, path: str | os.PathLike, *, binary: bool = False) -> None:
        self.path = Path(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent or ".")
        self.tmp = Path(tmp)
        self.fh: IO[Any] = os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8")
        self.closed = False

    def write(self, data: Any) -> int:
        return self.fh.write(data)

    def flush(self) -> None:
        self.fh.flush()

    def commit(self) -> None:
        """Complete the file and put it in place (the temporary file is removed if that fails)."""
        if self.closed:
            return
        self.closed = True
        try:
            self.fh.flush()
            os.fsync(self.fh.fileno())
            self.fh.close()
            _keep_mode(self.path, self.tmp)
            os.replace(self.tmp, self.path)
        except BaseException:
            self._remove()
            raise

    def abort(self) -> None:
        if not self.closed:
            self.closed = True
            self._remove()

    def close(self) -> None:
        self.commit()

    def _remove(self) -> None:
        with contextlib.suppress(OSError):
            self.fh.close()
        self.tmp.unlink(missing_ok=True)

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if kind is None:
            self.commit()
        else:
            self.abort()


def _keep_mode(path: Path, tmp: Path) -> None:
    """The new file keeps the mode of the one it replaces; a new one gets what the umask gives a
    new file (``mkstemp`` creates 0600 whatever the umask)."""
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(tmp, mode)

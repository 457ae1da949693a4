"""Progress on stderr for long commands: bytes, lines and their rate, only when stderr is a terminal.

``-q`` (or a stderr that is a file or a pipe) keeps every bar silent.  ``ingest`` has its own bar
inside the store (:mod:`logparse.store.ingest`), shown under the same rule.
"""

from __future__ import annotations

import sys
import time
from typing import Any


def enabled(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


class Bar:
    """A rich progress bar (transient) counting bytes and lines, or nothing at all when disabled."""

    def __init__(self, description: str, *, total: int | None = None, quiet: bool = False, unit: str = "lines"):
        self.on = enabled(quiet)
        self.unit = unit
        self.bytes = 0
        self.lines = 0
        self._t0 = time.monotonic()
        self._progress: Any = None
        if self.on:
            self._start(description, total)

    def _start(self, description: str, total: int | None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TransferSpeedColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TextColumn("{task.fields[lines]:,} " + self.unit),
            TextColumn("{task.fields[rate]:,.0f} " + self.unit + "/s"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._progress.add_task(description[-40:], total=total, lines=0, rate=0.0)
        self._progress.start()

    def advance(self, nbytes: int = 0, lines: int = 0) -> None:
        self.bytes += nbytes
        self.lines += lines
        if self._progress is not None:
            elapsed = max(time.monotonic() - self._t0, 1e-6)
            self._progress.update(self._task, completed=self.bytes, lines=self.lines, rate=self.lines / elapsed)

    def set(self, nbytes: int, lines: int) -> None:
        self.advance(nbytes - self.bytes, lines - self.lines)

    def close(self) -> None:
        if self._progress is not None:
            p, self._progress = self._progress, None
            p.stop()

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

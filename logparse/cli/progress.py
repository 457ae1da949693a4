"""Progress on stderr for long commands: bytes, lines and their rate, only when stderr is a terminal.

``-q`` (or a stderr that is a file or a pipe) keeps every bar silent.  ``ingest`` has its own bar
inside the store (:mod:`logparse.store.ingest_progress`), shown under the same rule.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from logparse.text import console_style, terminal_text


def enabled(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


class Bar:
    """A rich progress bar (transient) counting bytes and lines, or nothing at all when disabled."""

    def __init__(
        self,
        description: str,
        *,
        total: int | None = None,
        quiet: bool = False,
        unit: str = "lines",
        show_bytes: bool = True,
    ):
        self.on = enabled(quiet)
        self.unit = unit
        self.show_bytes = show_bytes
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

        byte_columns = [DownloadColumn(), TransferSpeedColumn()] if self.show_bytes else []
        self._progress = Progress(
            TextColumn("{task.description}", style="bold", markup=False),
            BarColumn(),
            *byte_columns,
            TextColumn("{task.fields[lines]:,} " + self.unit),
            TextColumn("{task.fields[rate]:,.0f} " + self.unit + "/s"),
            TimeElapsedColumn(),
            console=Console(stderr=True, **console_style()),
            transient=True,
        )
        self._task = self._progress.add_task(terminal_text(description[-40:]), total=total, lines=0, rate=0.0)
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


class SourcesProgress:
    """A :class:`Bar` over sources parsed one after the other: a thread reads the current source's
    byte count and its parser's line count every quarter second (the vectorized path included)."""

    def __init__(self, description: str, *, total: int | None = None, quiet: bool = False) -> None:
        self.bar = Bar(description, total=total, quiet=quiet)
        self._done_bytes = self._done_lines = 0
        self._current: tuple[Any, Any] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self.bar.on:
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()

    def source(self, src: Any, parser: Any) -> None:
        """``parse_sources``'s ``on_source``: the previous source is finished, this one begins."""
        with self._lock:
            if self._current is not None:
                b, n = self._counts(*self._current)
                self._done_bytes += b
                self._done_lines += n
            self._current = (src, parser)

    @staticmethod
    def _counts(src: Any, parser: Any) -> tuple[int, int]:
        return int(getattr(src, "bytes_read", 0) or 0), int(parser.counts.total)

    def _update(self) -> None:
        with self._lock:
            b, n = self._counts(*self._current) if self._current is not None else (0, 0)
            self.bar.set(self._done_bytes + b, self._done_lines + n)

    def _poll(self) -> None:
        while not self._stop.wait(0.25):
            self._update()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._update()
        self.bar.close()

    def __enter__(self) -> SourcesProgress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

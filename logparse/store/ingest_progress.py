"""The progress bar of an ingest: bytes and lines per second of the input being read, on stderr.

Shown only on a terminal, and only for inputs of :data:`PROGRESS_MIN_BYTES` or more (or of unknown
size); a background thread polls the source's byte count and the parser's line count, so the
record path and the vectorized path show the same bar.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from logparse.text import console_style, terminal_text

if TYPE_CHECKING:
    import threading

    from rich.progress import Progress, TaskID


#: Inputs at least this large (or of unknown size) get a progress bar on a terminal.
PROGRESS_MIN_BYTES = 4 << 20


@dataclass
class _Bar:
    """A progress bar that is showing, and the thread that updates it."""

    progress: Progress
    task: TaskID
    stop: threading.Event
    thread: threading.Thread


class ProgressBar:
    """A rich progress bar on stderr (bytes and lines per second), only on a terminal.

    A background thread polls the source's byte count and the parser's line count, so it
    works the same for the record path and the vectorized (block) path.
    """

    def __init__(self, src, enabled: bool | None, sp=None):
        self.src = src
        self.sp = sp
        size = getattr(src, "size", None)
        if enabled is None:
            enabled = sys.stderr.isatty() and (size is None or size >= PROGRESS_MIN_BYTES)
        self.enabled = enabled
        self._bar: _Bar | None = None
        if enabled:
            self._bar = self._start(src, size)

    def _start(self, src, size: int | None) -> _Bar:
        import threading

        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TransferSpeedColumn,
        )

        progress = Progress(
            TextColumn("{task.description}", style="bold", markup=False),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TextColumn("{task.fields[lines]:,} lines"),
            TextColumn("{task.fields[lps]:,.0f} lines/s"),
            TimeElapsedColumn(),
            console=Console(stderr=True, **console_style()),
            transient=True,
        )
        name = Path(str(src.name)).name or str(src.name)
        task = progress.add_task(terminal_text(name[-40:]), total=size, lines=0, lps=0.0)
        progress.start()
        stop = threading.Event()
        thread = threading.Thread(target=self._poll, args=(progress, task, stop), daemon=True)
        thread.start()
        return _Bar(progress, task, stop, thread)

    def tick(self) -> None:
        """Kept for callers that count records themselves; the poller does the work."""

    def _poll(self, progress: Progress, task: TaskID, stop: threading.Event) -> None:
        while not stop.wait(0.25):
            self._update(progress, task)

    def _update(self, progress: Progress, task_id: TaskID) -> None:
        task = progress.tasks[0]
        elapsed = task.elapsed or 0.0
        lines = self.sp.counts.total if self.sp is not None else 0
        progress.update(
            task_id,
            completed=getattr(self.src, "bytes_read", 0),
            lines=lines,
            lps=lines / elapsed if elapsed > 0 else 0.0,
        )

    def close(self) -> None:
        bar = self._bar
        if bar is not None:
            bar.stop.set()
            bar.thread.join(timeout=1.0)
            self._update(bar.progress, bar.task)
            bar.progress.stop()

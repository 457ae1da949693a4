"""One line while its outer layers are peeled off, and what the peeling reports to.

:class:`logparse.sources.lines.LineParser` hands a :class:`Layers` to each format module
in turn (compose, kubectl, journald header or docker time, Docker Desktop / Ray / Python
logging wrappers, free text); a module that recognises its layer at ``pos`` records what
the layer says (time, host, unit, pid, notes) and moves ``pos`` past it.  What is left
from ``pos`` on is the SGLang line.
"""

from __future__ import annotations

from typing import Protocol


class Layers:
    """What the outer layers of one line said so far (a plain slotted class: one is made
    for every line that has layers)."""

    __slots__ = ("boot", "fmt", "header_end", "host", "notes", "pid", "pos", "raw", "ts", "unit")

    def __init__(self, raw: bytes) -> None:
        #: The physical line (a Ray layer may cut its own suffix off the end).
        self.raw = raw
        #: Where the text not yet peeled starts.
        self.pos = 0
        #: Epoch seconds UTC; a ``(month, day, seconds)`` tuple for year-less journald times.
        self.ts: float | tuple | None = None
        self.host: str | None = None
        self.unit: str | None = None
        self.pid: int | None = None
        self.boot: str | None = None
        #: The outermost format recognised (the first layer that set it wins).
        self.fmt: str | None = None
        self.notes: list[str] = []
        #: End of a journald short* header that starts the line: journalctl indents the
        #: further lines of a multi-line MESSAGE to this width.  -1: no such header.
        self.header_end = -1


class ProblemSink(Protocol):
    """What a parser reports to: the source being read (or a stub when sniffing)."""

    name: str
    #: journald ``__CURSOR`` of the last entry read, per (host, unit)
    last_cursor: dict

    def note_problem(self, kind: str, n: int = 1) -> None:
        """Count a data-quality problem (one warning per kind, with the count)."""

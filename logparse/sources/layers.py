"""One line while its outer layers are peeled off, and what the peeling reports to.

:class:`logparse.sources.lines.LineParser` hands a :class:`Layers` to each format module
in turn (compose, kubectl, journald header or docker time, Docker Desktop / Ray / Python
logging wrappers, free text); a module that recognises its layer at ``pos`` records what
the layer says (time, host, unit, pid, notes) and moves ``pos`` past it.  What is left
from ``pos`` on is the SGLang line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(slots=True)
class Layers:
    #: The physical line (a Ray layer may cut its own suffix off the end).
    raw: bytes
    #: Where the text not yet peeled starts.
    pos: int = 0
    #: Epoch seconds UTC; a ``(month, day, seconds)`` tuple for year-less journald times.
    ts: float | tuple | None = None
    host: str | None = None
    unit: str | None = None
    pid: int | None = None
    boot: str | None = None
    #: The outermost format recognised (the first layer that set it wins).
    fmt: str | None = None
    notes: list[str] = field(default_factory=list)
    #: End of a journald short* header that starts the line: journalctl indents the further
    #: lines of a multi-line MESSAGE to this width.  -1: no such header.
    header_end: int = -1


class ProblemSink(Protocol):
    """What a parser reports to: the source being read (or a stub when sniffing)."""

    name: str
    #: journald ``__CURSOR`` of the last entry read, per (host, unit)
    last_cursor: dict

    def note_problem(self, kind: str, n: int = 1) -> None:
        """Count a data-quality problem (one warning per kind, with the count)."""

"""What the fast stage hands the parse loop besides records.

An engine's fast reader (:meth:`logparse.engines.base.Engine.fast_reader`) reads a large input in
blocks and decodes the lines it knows in bulk; what it yields, in input order, is what the parse loop
(:func:`logparse.pipeline.parse`) takes in: a :class:`~logparse.sources.records.Record` for each line
the grammar reads, and between them these three:

* :class:`Counted` -- lines the stage accounted for itself (its runtime lines, known noise), with the
  pids that printed the engine's lines among them (their units are the engine's);
* :data:`GAP` -- lines were read in bulk since the last record: they were well-formed engine lines,
  which end any multi-line record (a traceback, a warning) open on any stream;
* :class:`RuntimeSlice` -- the runtime aggregate of one stream's runtime lines, for the launch open
  there (and, for the store, the stamps of its lines when the reader kept them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Counted:
    """Lines the fast stage accounted for: ``total`` read, ``parsed`` of them runtime lines, the rest noise."""

    total: int
    parsed: int
    pids: set[int] = field(default_factory=set)


@dataclass(slots=True)
class Gap:
    """Lines read in bulk since the last record (see the module's docstring)."""


#: The one gap (it carries nothing).
GAP = Gap()


@dataclass(slots=True)
class RuntimeSlice:
    """The runtime aggregate of ``engine``'s runtime lines on the stream ``key``; ``stamps``: a polars
    frame of their stamps (``ts``) when the reader keeps them, else None."""

    key: tuple
    aggregate: dict[str, Any]
    engine: str
    stamps: Any = None

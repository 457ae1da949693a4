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

The generation throughput's distribution of an aggregate is counted in fixed buckets
(:data:`THROUGHPUT_EDGES`, read by :class:`logparse.launches.runtime.Histogram`), so that a fast
reader's counts in bulk and the assembler's line by line are the same, and add up across blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Buckets of the throughput's distribution: ``STEPS`` a doubling; values below ``2**-5`` share
#: bucket ``THROUGHPUT_ZERO``, values beyond ``2**30`` bucket ``THROUGHPUT_TOP``.
THROUGHPUT_STEPS = 8
THROUGHPUT_ZERO = -5 * THROUGHPUT_STEPS - 1
THROUGHPUT_TOP = 30 * THROUGHPUT_STEPS
#: The lower edge of buckets ``THROUGHPUT_ZERO + 1`` to ``THROUGHPUT_TOP`` (a fixed table of floats:
#: a value's bucket is ``THROUGHPUT_ZERO`` plus the number of edges at or below it, whichever code
#: counts them: Python's ``bisect``, numpy's or polars' ``search_sorted``).
THROUGHPUT_EDGES = tuple(2.0 ** (i / THROUGHPUT_STEPS) for i in range(THROUGHPUT_ZERO + 1, THROUGHPUT_TOP + 1))
#: A throughput beyond this (tokens/s) is no figure (a damaged line): not counted.
MAX_THROUGHPUT = 1e12


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

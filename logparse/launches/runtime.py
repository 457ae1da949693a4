"""A launch's runtime figures, aggregated as its runtime lines arrive, whatever the engine.

A running server prints a line every few seconds: SGLang one per batch (``Decode batch`` /
``Prefill batch``), vLLM a statistics line every 5-10 s (``Avg prompt throughput: … Running: N reqs,
Waiting: N reqs, GPU KV cache usage: x%``).  They are most of a production log, so they are reduced
to one :class:`RuntimeAgg` per launch instead of being kept as events; each engine's assembler feeds
it the figures of its own lines (an engine's fast path merges an aggregate it computed in bulk,
:meth:`RuntimeAgg.merge`).  ``Launch.runtime`` carries :meth:`RuntimeAgg.to_dict`'s keys:

* ``peak_token_usage``: the peak share (0-1) of the KV cache in use (SGLang's ``token usage``,
  vLLM's ``GPU KV cache usage`` / 100);
* ``peak_running_req``, ``peak_queue_req``: the peak requests running and waiting (SGLang's
  ``#queue-req``, vLLM's ``Waiting`` / V0's ``Pending``);
* ``peak_tokens``: the peak tokens in the pool, where the engine prints them (SGLang's decode lines);
* ``retractions``: requests the engine took back for want of KV cache (SGLang's retractions, vLLM's
  preemption warnings);
* ``batch_lines``: the runtime lines read; ``first_runtime_at`` / ``last_runtime_at``;
* where the lines print a generation throughput (SGLang's decode lines' ``gen throughput``, vLLM's
  ``Avg generation throughput``):
  ``gen_throughput_p50``, ``gen_throughput_p90``, ``gen_throughput_min``, ``gen_throughput_max``
  (tokens/s, one value a line) and ``gen_throughput_hist``, the distribution they are read from (:class:`Histogram`).
"""

from __future__ import annotations

import bisect
import math
from typing import Any

from logparse.grammar.bounds import FRACTION, OUT_OF_RANGE, out_of_range_warning
from logparse.grammar.fast import (
    MAX_THROUGHPUT,
    THROUGHPUT_EDGES,
    THROUGHPUT_STEPS,
    THROUGHPUT_TOP,
    THROUGHPUT_ZERO,
)

#: Runtime lines with a figure out of range whose warning a launch keeps (the rest are counted).
MAX_IGNORED_KEPT = 5
#: The peaks of the runtime lines (maxima: any order and any split of the lines gives the same).
PEAKS = ("peak_running_req", "peak_token_usage", "peak_queue_req", "peak_tokens")
#: The figures of the generation throughput's distribution (:class:`Histogram`).
THROUGHPUT_KEYS = (
    "gen_throughput_p50",
    "gen_throughput_p90",
    "gen_throughput_min",
    "gen_throughput_max",
    "gen_throughput_hist",
)


class Histogram:
    """A distribution of non-negative values in a fixed set of buckets: merging two is exact (counts
    add) and its size bounded (at most :data:`BUCKETS` buckets, whatever the number of values).

    Bucket ``i`` holds the values in ``[2**(i/8), 2**((i+1)/8))`` (each 9 % wide: a quantile is its
    bucket's middle, within 4.5 % of the true value, and within the exact minimum and maximum); the values
    below ``2**-5`` (an idle interval's 0.0) share bucket :data:`ZERO`, read as 0; values beyond
    ``2**30`` the last one.  The edges are a fixed table of floats (:data:`EDGES`): a value's bucket is
    :data:`ZERO` plus the number of edges at or below it, the same whichever code counts them (Python's
    ``bisect`` here, numpy's or polars' ``search_sorted`` in an engine's fast path)."""

    STEPS = THROUGHPUT_STEPS
    ZERO = THROUGHPUT_ZERO
    TOP = THROUGHPUT_TOP
    BUCKETS = TOP - ZERO + 1
    #: the lower edge of buckets ``ZERO + 1`` to ``TOP``, in order (:data:`logparse.grammar.fast.THROUGHPUT_EDGES`)
    EDGES = THROUGHPUT_EDGES

    __slots__ = ("counts", "max", "min")

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.max: float | None = None
        self.min: float | None = None

    @classmethod
    def bucket(cls, value: float) -> int:
        return cls.ZERO + bisect.bisect_right(cls.EDGES, value)

    def add(self, value: float) -> None:
        b = self.bucket(value)
        self.counts[b] = self.counts.get(b, 0) + 1
        self.max = value if self.max is None else max(self.max, value)
        self.min = value if self.min is None else min(self.min, value)

    def merge(self, pairs: Any, top: Any, bottom: Any = None) -> None:
        """Add a histogram given as ``[[bucket, count], ...]`` (:meth:`pairs`) with its extremes."""
        for pair in pairs or ():
            b, n = int(pair[0]), int(pair[1])
            if self.ZERO <= b <= self.TOP and n > 0:
                self.counts[b] = self.counts.get(b, 0) + n
        if isinstance(top, (int, float)) and not isinstance(top, bool):
            self.max = top if self.max is None else max(self.max, top)
        if isinstance(bottom, (int, float)) and not isinstance(bottom, bool):
            self.min = bottom if self.min is None else min(self.min, bottom)

    def pairs(self) -> list[list[int]]:
        return [[b, self.counts[b]] for b in sorted(self.counts)]

    def quantile(self, q: float) -> float | None:
        """The value below which a share ``q`` of the values lie (nearest rank), from its bucket."""
        total = sum(self.counts.values())
        if not total:
            return None
        rank, seen = max(1, math.ceil(q * total)), 0
        for b in sorted(self.counts):
            seen += self.counts[b]
            if seen >= rank:
                mid = 0.0 if b == self.ZERO else 2.0 ** ((b + 0.5) / self.STEPS)
                lo = self.min if self.min is not None else mid
                return round(max(lo, min(mid, self.max if self.max is not None else mid)), 1)
        return None  # pragma: no cover (the ranks add up to total)

    def figures(self) -> dict[str, Any]:
        """The distribution's keys of ``Launch.runtime`` (none when it holds no value)."""
        if not self.counts:
            return {}
        return {
            "gen_throughput_p50": self.quantile(0.5),
            "gen_throughput_p90": self.quantile(0.9),
            "gen_throughput_min": self.min,
            "gen_throughput_max": self.max,
            "gen_throughput_hist": self.pairs(),
        }


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def _peak(old: float | None, new: Any) -> float | None:
    if not _number(new):
        return old
    return new if old is None else max(old, new)


class RuntimeAgg:
    """The runtime figures of one launch (module doc), aggregated as lines arrive.  Every path that
    reads the lines (an engine's assembler line by line, a fast path in bulk) gives the same figures."""

    __slots__ = (
        "batch_lines",
        "first_at",
        "gen_throughput",
        "ignored",
        "last_at",
        "n_ignored",
        "peak_queue_req",
        "peak_running_req",
        "peak_token_usage",
        "peak_tokens",
        "retractions",
    )

    def __init__(self) -> None:
        self.batch_lines = 0
        self.peak_running_req: float | None = None
        self.peak_token_usage: float | None = None
        self.peak_queue_req: float | None = None
        self.peak_tokens: float | None = None
        self.gen_throughput = Histogram()
        self.retractions = 0
        self.first_at: str | None = None
        self.last_at: str | None = None
        #: warnings for the first runtime figures out of their bounds (:mod:`logparse.grammar.bounds`), and how many
        self.ignored: list[str] = []
        self.n_ignored = 0

    def _ts(self, ts: str | None) -> None:
        if ts:
            if self.first_at is None or ts < self.first_at:
                self.first_at = ts
            if self.last_at is None or ts > self.last_at:
                self.last_at = ts

    def add_line(
        self,
        ts: str | None,
        fields: dict[str, Any],
        line_no: int = 0,
        *,
        gen_throughput: Any = None,
        **peaks: Any,
    ) -> None:
        """One runtime line: its time, its fields (for the notes of figures out of range the grammar
        set aside), its generation throughput and its figures by the names of :data:`PEAKS` (without
        ``peak_``: ``running_req``, ``token_usage``, ``queue_req``, ``tokens``)."""
        self.batch_lines += 1
        self._ts(ts)
        notes = fields.get(OUT_OF_RANGE)
        if notes:
            self.n_ignored += 1
            if len(self.ignored) < MAX_IGNORED_KEPT:
                self.ignored.extend(out_of_range_warning(line_no, k, v) for k, v in notes.items())
        self.merge_peaks(
            peaks.get("running_req"), peaks.get("token_usage"), peaks.get("queue_req"), peaks.get("tokens")
        )
        if _number(gen_throughput) and 0 <= gen_throughput <= MAX_THROUGHPUT:
            self.gen_throughput.add(gen_throughput)

    def add_retract(self, ts: str | None) -> None:
        self.retractions += 1
        self._ts(ts)

    def merge_peaks(self, running: Any, usage: Any, queue: Any, tokens: Any) -> None:
        self.peak_running_req = _peak(self.peak_running_req, running)
        if not _number(usage) or FRACTION.holds(usage):
            self.peak_token_usage = _peak(self.peak_token_usage, usage)
        self.peak_queue_req = _peak(self.peak_queue_req, queue)
        self.peak_tokens = _peak(self.peak_tokens, tokens)

    def merge(self, other: dict[str, Any]) -> None:
        """Merge an aggregate given as a dict (:meth:`to_dict`'s keys; a fast path's)."""
        self.batch_lines += int(other.get("batch_lines") or 0)
        self.retractions += int(other.get("retractions") or 0)
        self.merge_peaks(*(other.get(k) for k in PEAKS))
        self.gen_throughput.merge(
            other.get("gen_throughput_hist"), other.get("gen_throughput_max"), other.get("gen_throughput_min")
        )
        self._ts(other.get("first_runtime_at"))
        self._ts(other.get("last_runtime_at"))

    def warnings(self) -> list[str]:
        """The launch's warnings for runtime lines whose figures are out of their bounds."""
        more = self.n_ignored - MAX_IGNORED_KEPT
        tail = [f"{more} more batch line(s) with a figure out of range: ignored"] if more > 0 else []
        return self.ignored + tail

    def to_dict(self) -> dict[str, Any]:
        if not self.batch_lines and not self.retractions:
            return {}
        return {
            "peak_running_req": self.peak_running_req,
            "peak_token_usage": self.peak_token_usage,
            "peak_queue_req": self.peak_queue_req,
            "peak_tokens": self.peak_tokens,
            "retractions": self.retractions,
            "batch_lines": self.batch_lines,
            "first_runtime_at": self.first_at,
            "last_runtime_at": self.last_at,
            **self.gen_throughput.figures(),
        }


def throughput_of(runtime: dict[str, Any]) -> Histogram:
    """The generation throughput's distribution a ``Launch.runtime`` carries."""
    h = Histogram()
    h.merge(runtime.get("gen_throughput_hist"), runtime.get("gen_throughput_max"), runtime.get("gen_throughput_min"))
    return h

"""Runtime KV pressure across inputs: merging batch-line aggregates without double counting.

The parser reduces ``Decode batch`` / ``Prefill batch`` lines to aggregates (a count,
peaks, the first and last time) instead of events.  When a launch's runtime arrives in
pieces (journal windows, half a log then the whole log), the store merges the pieces:

* peaks are maxima and the time span a union: overlap cannot inflate them;
* a distribution (the generation throughput's, :class:`logparse.launches.runtime.Histogram`) adds
  up when the pieces are disjoint in time; pieces that overlap cannot be told apart in it, so the
  larger piece's stands (overlap cannot inflate it either);
* the line count treats what the store has as one contiguous span ``[first, last]``,
  with the number of lines seen in its first and last second.  A new piece whose lines
  come with their timestamps (the record path, always used for journal inputs) adds
  exactly the lines outside that span, plus those beyond the known count in its edge
  seconds.  A piece known only by its aggregate adds everything when it does not
  overlap the span, replaces the count when it covers the span, adds nothing when it
  lies inside it, and otherwise (a partial overlap) adds the share of its lines that
  falls outside the span, assuming lines are evenly spread in time (an estimate).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from logparse.launches.runtime import PEAKS, THROUGHPUT_KEYS, throughput_of

#: Runtime keys that come from batch lines (the rest of ``Launch.runtime`` comes from events).
AGG_KEYS = PEAKS + ("retractions", "batch_lines", "first_runtime_at", "last_runtime_at") + THROUGHPUT_KEYS


@dataclass
class BatchSpan:
    lines: int = 0
    first: str | None = None
    last: str | None = None
    first_lines: int | None = None
    last_lines: int | None = None
    peaks: dict[str, Any] = field(default_factory=dict)
    #: timestamp -> number of batch lines (None: only the aggregate is known)
    ts_counts: Counter | StampFrame | None = None

    @property
    def empty(self) -> bool:
        return self.lines <= 0

    @classmethod
    def from_runtime(
        cls, runtime: dict[str, Any] | None, edges: dict[str, Any] | None = None, ts_counts: Counter | None = None
    ) -> BatchSpan:
        rt = runtime or {}
        peaks = {k: rt.get(k) for k in PEAKS} | {k: rt[k] for k in THROUGHPUT_KEYS if rt.get(k) is not None}
        span = cls(lines=int(rt.get("batch_lines") or 0), peaks=peaks)
        if isinstance(ts_counts, StampFrame):
            span.ts_counts = ts_counts
            span.first, span.last = ts_counts.first, ts_counts.last
            span.first_lines, span.last_lines = ts_counts.get(span.first), ts_counts.get(span.last)
            return span
        if ts_counts:
            stamps = [t for t in ts_counts if t]
            span.ts_counts = Counter(ts_counts)
            if stamps:
                span.first, span.last = min(stamps), max(stamps)
                span.first_lines, span.last_lines = ts_counts[span.first], ts_counts[span.last]
            return span
        if edges:
            span.first, span.last = edges.get("first"), edges.get("last")
            span.first_lines, span.last_lines = edges.get("first_lines"), edges.get("last_lines")
        elif span.lines:
            span.first, span.last = rt.get("first_runtime_at"), rt.get("last_runtime_at")
        return span

    def edges(self) -> dict[str, Any] | None:
        if self.empty:
            return None
        return {"first": self.first, "last": self.last, "first_lines": self.first_lines, "last_lines": self.last_lines}


def _max(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _seconds(ts: str | None) -> float | None:
    if not ts or len(ts) < 19:
        return None
    try:
        return datetime.fromisoformat(ts).timestamp()
    except ValueError:
        return None


def merge(a: BatchSpan, b: BatchSpan) -> BatchSpan:
    """``a`` (what the store has) united with ``b`` (a new piece)."""
    if b.empty:
        return a
    if a.empty:
        return b
    out = BatchSpan(peaks={k: _max(a.peaks.get(k), b.peaks.get(k)) for k in PEAKS})
    out.peaks.update(_throughput(a, b))
    if a.first is None or a.last is None:
        out.lines = max(a.lines, b.lines)  # no time to tell pieces apart: the larger one
    elif b.ts_counts is not None:
        out.lines = a.lines + _added_beyond(a, b.ts_counts)
    elif b.first is None or b.last is None:
        out.lines = max(a.lines, b.lines)
    elif b.first > a.last or b.last < a.first:
        out.lines = a.lines + b.lines  # disjoint pieces
    elif b.first <= a.first and b.last >= a.last:
        out.lines = max(a.lines, b.lines)  # b covers what the store has
    elif b.first >= a.first and b.last <= a.last:
        out.lines = a.lines  # inside: nothing new
    else:
        s_a0, s_a1, s_b0, s_b1 = (_seconds(x) for x in (a.first, a.last, b.first, b.last))
        if s_a0 is None or s_a1 is None or s_b0 is None or s_b1 is None or s_b1 <= s_b0:
            out.lines = max(a.lines, b.lines)
        else:
            outside = max(0.0, min(s_b1, s_a0) - s_b0) + max(0.0, s_b1 - max(s_b0, s_a1))
            out.lines = a.lines + round(b.lines * outside / (s_b1 - s_b0))
    # the span and its edge counts
    out.first = min(x for x in (a.first, b.first) if x) if (a.first or b.first) else None
    out.last = max(x for x in (a.last, b.last) if x) if (a.last or b.last) else None

    def edge(ts, which):
        counts = []
        for s in (a, b):
            at = _count_at(s.ts_counts, ts)
            if at is not None:
                counts.append(at)
            elif getattr(s, which) == ts:
                counts.append(getattr(s, which + "_lines"))
        known = [c for c in counts if c is not None]
        return max(known) if known else None

    out.first_lines = edge(out.first, "first")
    out.last_lines = edge(out.last, "last")
    return out


def _disjoint(a: BatchSpan, b: BatchSpan) -> bool:
    if a.first is None or a.last is None or b.first is None or b.last is None:
        return False
    return b.first > a.last or b.last < a.first


def _throughput(a: BatchSpan, b: BatchSpan) -> dict[str, Any]:
    """The throughput's figures of two pieces: summed when disjoint, else the larger piece's (module doc)."""
    has_a, has_b = (any(k in s.peaks for k in THROUGHPUT_KEYS) for s in (a, b))
    if not has_a or not has_b:
        return {k: v for s in (a, b) for k, v in s.peaks.items() if k in THROUGHPUT_KEYS}
    if not _disjoint(a, b):
        larger = b if b.lines > a.lines else a
        return {k: v for k, v in larger.peaks.items() if k in THROUGHPUT_KEYS}
    both = throughput_of(a.peaks)
    other = throughput_of(b.peaks)
    both.merge(other.pairs(), other.max, other.min)
    return both.figures()


def _added_beyond(a: BatchSpan, counts: Counter | StampFrame) -> int:
    """The lines of ``counts`` that the span ``a`` does not hold: those outside it, and those
    beyond the known count in its edge seconds."""
    assert a.first is not None and a.last is not None
    if isinstance(counts, StampFrame):
        edges = {t: counts.get(t) for t in (a.first, a.last)}
        items = [(t, n) for t, n in edges.items() if n is not None]
        added = counts.outside(a.first, a.last)
    else:
        items = [(t, n) for t, n in counts.items() if t is not None]
        added = 0
    for ts, n in items:
        if ts < a.first or ts > a.last:
            added += n
        elif ts == a.first or ts == a.last:
            known = a.first_lines if ts == a.first else a.last_lines
            if a.first == a.last:
                known = max(a.first_lines or 0, a.last_lines or 0)
            added += max(0, n - (known if known is not None else n))
    return added


def _count_at(counts: Counter | StampFrame | None, ts: str | None) -> int | None:
    return None if counts is None else counts.get(ts)


class StampFrame:
    """Batch lines per stamp as the bulk path counts them: the distinct ISO stamps, sorted (numpy
    byte strings), and the lines of each (a stamp every second or so of a long log is too many for
    a dict, and only a few counts are ever asked of them)."""

    def __init__(self, ts, n) -> None:
        import numpy as np

        if len(ts) > 1 and bool((ts[1:] >= ts[:-1]).all()):  # in time order, as a log's lines come: no sort
            first = np.flatnonzero(np.concatenate(([True], ts[1:] != ts[:-1])))
            self.ts, self.n = ts[first], np.add.reduceat(np.asarray(n, np.int64), first) if len(first) else n
        else:
            self.ts, at = np.unique(ts, return_inverse=True)
            self.n = np.bincount(at.ravel(), weights=n, minlength=len(self.ts)).astype(np.int64)
        self._below = np.concatenate(([0], np.cumsum(self.n)))  # lines of the stamps before each
        self.first: str | None = self.ts[0].decode() if len(self.ts) else None
        self.last: str | None = self.ts[-1].decode() if len(self.ts) else None

    def get(self, ts: str | None) -> int | None:
        """The lines of stamp ``ts`` (None when it has none)."""
        if ts is None or not len(self.ts):
            return None
        k = int(self.ts.searchsorted(ts.encode()))
        return int(self.n[k]) if k < len(self.ts) and self.ts[k] == ts.encode() else None

    def outside(self, first: str, last: str) -> int:
        """The lines whose stamp lies before ``first`` or after ``last``."""
        lo = int(self.ts.searchsorted(first.encode(), side="left"))
        hi = int(self.ts.searchsorted(last.encode(), side="right"))
        return int(self._below[lo] + self._below[-1] - self._below[max(hi, lo)])

    def per_stamp(self) -> dict[str, int]:
        """Lines by stamp."""
        return {t.decode(): int(c) for t, c in zip(self.ts.tolist(), self.n.tolist())}

    def stamps(self) -> int:
        """How many distinct stamps."""
        return len(self.ts)


def stamp_counts(counter: Counter | None, frames: list | None) -> Counter | StampFrame | None:
    """The batch lines per stamp of a launch: counted one by one (the record path), by the bulk
    path (``(ts, n)`` pairs of numpy arrays, or polars frames of ``ts`` and ``n`` where polars
    classified the lines), or both.  Lines without a stamp are not counted by stamp."""
    if not frames:
        return counter
    import numpy as np

    parts = [
        f if isinstance(f, tuple) else (f.get_column("ts").to_numpy(), f.get_column("n").to_numpy()) for f in frames
    ]
    if counter:
        parts.append((np.array(list(counter), dtype=object), np.array(list(counter.values()), np.int64)))
    ts = np.concatenate([_stamp_bytes(t) for t, _ in parts])
    n = np.concatenate([np.asarray(c, np.int64) for _, c in parts])
    known = ts != b""
    return StampFrame(ts[known], n[known])


def _stamp_bytes(ts):
    """Stamps as numpy byte strings (None: empty)."""
    import numpy as np

    if ts.dtype.kind == "S":
        return ts
    return np.array([(t or "").encode() for t in ts.tolist()], dtype="S")


def apply(runtime: dict[str, Any], span: BatchSpan) -> dict[str, Any]:
    """``Launch.runtime`` of a re-assembled launch (events only) completed with the batch span."""
    rt = dict(runtime)
    retractions = int(rt.get("retractions") or 0)
    if span.empty and not retractions:
        for k in AGG_KEYS:
            rt.pop(k, None)
        return rt
    first = [x for x in (span.first, rt.get("first_runtime_at")) if x]
    last = [x for x in (span.last, rt.get("last_runtime_at")) if x]
    rt.update({k: span.peaks.get(k) for k in PEAKS})
    for k in THROUGHPUT_KEYS:
        if span.peaks.get(k) is not None:
            rt[k] = span.peaks[k]
        else:
            rt.pop(k, None)
    rt["retractions"] = retractions
    rt["batch_lines"] = span.lines
    rt["first_runtime_at"] = min(first) if first else None
    rt["last_runtime_at"] = max(last) if last else None
    return rt


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in AGG_KEYS)

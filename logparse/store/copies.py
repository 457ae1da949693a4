"""Several copies of one launch made one (for :mod:`logparse.store.merge`): the launch its united
lines assemble (by the engine whose lines they are), the zone a copy printed, the richest process
identity of the copies, and their batch lines merged by time span.
"""

from __future__ import annotations

from collections.abc import Sequence

from logparse import engines
from logparse.grammar.events import Event
from logparse.launches.model import Launch
from logparse.store import runtime as rtm
from logparse.store.runtime import BatchSpan


def reassemble(events: list[Event], stream: tuple, version: str | None, ordinal: int | None = None) -> Launch:
    """The launch a parse of these lines assembles.  What an earlier assembly wrote on the events is
    cleared first: the variant that dates a wording is noted on the first line of it in the launch,
    which a line read from a piece may have been and no longer is."""
    for ev in events:
        ev.variant = None
    return events_engine(events).reassemble(events, stream, version, ordinal)


def events_engine(events: list[Event]) -> engines.Engine:
    """The engine whose lines these are: the first that owns them (:meth:`Engine.owns_events`, in the
    registry's order), else the default engine (lines no engine claims are the default's)."""
    return next((e for e in engines.all() if e.owns_events(events)), engines.default())


def known_zone(final: Launch, copies: Sequence[Launch | None]) -> str | None:
    """The zone of a launch united from several copies: the zone of a copy that starts at the same
    time (stored lines keep no zone of their own: a rendering that printed one knows it)."""
    return next(
        (c.time_zone for c in copies if c is not None and c.time_zone and c.started_at == final.started_at), None
    )


def canonical_stream(streams: Sequence[tuple]) -> tuple:
    """The richest process identity of several views of one launch: each part any of them knows (the
    views agree where two know it; a unit name before a syslog identifier such as python3)."""
    out = []
    for n in range(4):
        known = [s[n] for s in streams if len(s) > n and s[n] not in (None, "")]
        if n == 1:
            known.sort(key=lambda u: ("." not in str(u), str(u)))
        else:
            known.sort(key=str)
        out.append(known[0] if known else None)
    return tuple(out)


def span_key(span: BatchSpan) -> tuple:
    return (span.first or "", span.last or "")


def merged_span(stored: Sequence[BatchSpan], pieces: Sequence[BatchSpan]) -> BatchSpan:
    """The batch lines of one launch: what the store has, then each new piece in time order (a piece
    counted line by line, with its stamps, adds exactly what the store lacks)."""
    span = BatchSpan()
    for s in sorted(stored, key=span_key):
        span = rtm.merge(span, s)
    for s in sorted(pieces, key=span_key):
        span = rtm.merge(span, s)
    return span


def same_span(a: BatchSpan, b: BatchSpan) -> bool:
    return a.lines == b.lines and a.first == b.first and a.last == b.last and a.peaks == b.peaks

"""Pieces of launches whose start is in no input stored so far, kept until it arrives.

A journal window that begins mid-run, or the second half of a log ingested before the first, holds
lines of a launch the store does not have yet.  They are not dropped: the piece is kept in
``pending_pieces`` (its lines as events, their origins and each source's line range, its batch-line
span, its process identity) and joins its launch when an input arrives that shares a line with it
or, in the journal, names the same process (:func:`logparse.store.matching.groups`).  So a launch ends
the same whatever order its pieces were ingested in.  Pieces that share lines are kept as one; a
piece that neither holds a line that could be shared nor names a process cannot join anything and
is counted as dropped instead.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from logparse.grammar.events import Event
from logparse.store.frames import event_keys, line_hash, to_json
from logparse.store.items import Item, Origin
from logparse.store.runtime import BatchSpan, StampFrame

#: A piece's batch-line stamps are kept one by one up to this many distinct seconds (then its edges only).
MAX_STAMPS = 20_000

_EVENT_FIELDS = tuple(f.name for f in dataclasses.fields(Event))


@dataclass
class Piece:
    stream: tuple
    events: list[Event]
    origins: dict[int, Origin]
    span: BatchSpan
    ranges: dict[str, tuple[int | None, int | None]]

    def piece_id(self) -> str:
        """The same piece (the same lines of the same process) has the same id."""
        keys = event_keys(self.events)
        first = keys[0] if keys else (self.span.first or "", self.span.lines)
        parts = [str(x or "") for x in self.stream] + [str(first), str(len(keys))]
        return hashlib.sha256("\x1f".join(parts).encode("utf-8", "replace")).hexdigest()[:16]


def _span_json(span: BatchSpan) -> str | None:
    counts = span.ts_counts
    stamps: dict[str, int] | None = None
    if isinstance(counts, StampFrame):
        if counts.stamps() <= MAX_STAMPS:
            stamps = counts.per_stamp()
    elif counts is not None and len(counts) <= MAX_STAMPS:
        stamps = {str(k): int(v) for k, v in counts.items() if k}
    return to_json(
        {
            "lines": span.lines,
            "first": span.first,
            "last": span.last,
            "first_lines": span.first_lines,
            "last_lines": span.last_lines,
            "peaks": span.peaks,
            "stamps": stamps,
        }
    )


def _span_from(text: str | None) -> BatchSpan:
    d = json.loads(text) if text else {}
    span = BatchSpan(
        lines=int(d.get("lines") or 0),
        first=d.get("first"),
        last=d.get("last"),
        first_lines=d.get("first_lines"),
        last_lines=d.get("last_lines"),
        peaks=d.get("peaks") or {},
    )
    if d.get("stamps") is not None:
        span.ts_counts = Counter(d["stamps"])
    return span


def _event_rows(piece: Piece) -> list[dict[str, Any]]:
    out = []
    for ev in piece.events:
        row = {k: getattr(ev, k) for k in _EVENT_FIELDS}
        row["source_id"], row["cursor"] = piece.origins.get(id(ev), (None, None))
        out.append(row)
    return out


def replace(con, done: list[str], pieces: list[Piece], now: datetime) -> None:
    """Remove the pieces that joined a launch (or were united with others) and keep the new ones."""
    if done:
        con.execute("DELETE FROM pending_pieces WHERE piece_id IN (SELECT unnest(?::VARCHAR[]))", [done])
    for piece in pieces:
        pid = piece.piece_id()
        con.execute("DELETE FROM pending_pieces WHERE piece_id = ?", [pid])
        host, unit, boot, proc = (tuple(piece.stream) + (None,) * 4)[:4]
        hashes = sorted({line_hash(e.ts, e.text) for e in piece.events if e.ts})
        first = next((e.ts for e in piece.events if e.ts), None) or piece.span.first
        con.execute(
            "INSERT INTO pending_pieces VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                pid,
                host,
                unit,
                boot,
                proc,
                first,
                len(piece.events) + piece.span.lines,
                hashes,
                to_json(_event_rows(piece)),
                _span_json(piece.span),
                to_json({k: list(v) for k, v in piece.ranges.items()}),
                now,
            ],
        )


def relevant(con, items: list[Item]) -> list[Item]:
    """The kept pieces these items may continue or be continued by: those sharing a line with one of
    them, and those of the same process (host and pid) as one of them."""
    if not con.execute("SELECT 1 FROM pending_pieces LIMIT 1").fetchall():
        return []  # the common case: nothing kept
    hashes = sorted({line_hash(e.ts, e.text) for it in items for e in it.events if e.ts})
    procs = sorted({(it.host or it.stream[0] or "", it.stream[3]) for it in items if it.stream[3] is not None})
    if not hashes and not procs:
        return []
    rows = con.execute(
        "SELECT piece_id, host, unit, boot, pid, events::VARCHAR, span::VARCHAR, ranges::VARCHAR FROM pending_pieces "
        "WHERE list_has_any(line_hashes, ?::VARCHAR[]) OR (coalesce(host, ''), pid) IN "
        "(SELECT (unnest(?::VARCHAR[]), unnest(?::BIGINT[])))",
        [hashes, [h for h, _ in procs], [p for _, p in procs]],
    ).fetchall()
    return [_item_of(r) for r in sorted(rows)]


def _item_of(row: tuple) -> Item:
    piece_id, host, unit, boot, pid, events_json, span_json, ranges_json = row
    events, origins = [], {}
    for d in json.loads(events_json or "[]"):
        sid, cursor = d.pop("source_id", None), d.pop("cursor", None)
        ev = Event(**{k: v for k, v in d.items() if k in _EVENT_FIELDS})
        events.append(ev)
        origins[id(ev)] = (sid, cursor)
    ranges = {k: (v[0], v[1]) for k, v in (json.loads(ranges_json) if ranges_json else {}).items()}
    return Item(
        events=events,
        stream=(host, unit, boot, pid),
        continuation=True,
        span=_span_from(span_json),
        pending_id=piece_id,
        origins=origins,
        ranges=ranges,
    )

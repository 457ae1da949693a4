"""Ingest: parse inputs and merge their launches into the store.

One input (a file, stdin, a journal query, an imported store) is one transaction: all of
it lands, or none of it.  Parsing happens before the write lock is taken, so a long input
does not keep other logparse processes waiting.

Idempotence and merging:

* an input whose content hash is already in ``sources`` is skipped;
* a launch is identified by its ``launch_id`` (a hash of the host and the first startup
  lines); a launch seen again is merged, not duplicated;
* every event has a line identity (its timestamp and text, plus the occurrence number
  for repeated identical lines), so the events of the same launch read from two inputs
  -- two overlapping journal windows, half a log then the whole log, a file and the
  journal -- are united without double counting, and the launch is re-assembled from
  the union (outcome, ranks, warnings and all);
* batch lines (``Decode batch`` / ``Prefill batch``) reach the store as aggregates, merged
  by time span so that overlapping pieces are not counted twice (``store.runtime``);
* a piece of a launch whose start is not in this input (a journal window that begins
  mid-startup or mid-run) is attached to the stored launch that shares lines with it, or
  else to the latest stored launch of the same process (host, unit, boot, pid);
* with ``--journal``, the last ``__CURSOR`` per (host, unit) is kept in
  ``journal_cursors`` and the next run reads only what came after it.
"""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from logparse.grammar.events import Event
from logparse.launches.assemble import LaunchAssembler, stable_launch_id
from logparse.launches.model import Launch
from logparse.store import db as dbm
from logparse.store import runtime as rtm
from logparse.store.frames import LaunchMeta, event_keys, frames, line_hash, to_json
from logparse.store.runtime import BatchSpan

#: Event kinds that open a launch: a piece of a launch without one is a continuation.
OPENING_KINDS = frozenset({"server_args", "init_begin", "launch_dp"})
#: Inputs at least this large (or of unknown size) get a progress bar on a terminal.
PROGRESS_MIN_BYTES = 4 << 20
#: Files at least this large take the vectorized path (batch lines known by their aggregate only);
#: smaller inputs, and every journal query, are read record by record.
BULK_MIN_BYTES = 4 << 20


@dataclass
class IngestOptions:
    host: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    sglang_version: str | None = None
    lock_timeout: float = dbm.DEFAULT_LOCK_TIMEOUT
    input_format: str | None = None
    progress: bool | None = None  # None: when stderr is a terminal


@dataclass
class SourceOutcome:
    name: str
    status: str  # stored | skipped | empty (no SGLang lines) | unattached | imported
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    dropped_lines: int = 0
    message: str = ""


@dataclass
class IngestReport:
    sources: list[SourceOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def added(self) -> int:
        return sum(s.added for s in self.sources)

    @property
    def updated(self) -> int:
        return sum(s.updated for s in self.sources)

    @property
    def unchanged(self) -> int:
        return sum(s.unchanged for s in self.sources)

    @property
    def skipped(self) -> int:
        return sum(1 for s in self.sources if s.status == "skipped")

    def summary(self) -> str:
        stored = sum(1 for s in self.sources if s.status in ("stored", "imported"))
        empty = sum(1 for s in self.sources if s.status == "empty")
        parts = [f"{self.added} launch(es) added", f"{self.updated} updated", f"{self.unchanged} unchanged"]
        text = f"ingested {stored} input(s): " + ", ".join(parts)
        if self.skipped:
            text += f"; {self.skipped} input(s) skipped (already in the store)"
        if empty:
            text += f"; {empty} input(s) without SGLang lines not stored"
        dropped = sum(s.dropped_lines for s in self.sources)
        if dropped:
            text += f"; {dropped} line(s) of launches whose start is in no input and not in the store were dropped"
        return text


# ---------------------------------------------------------------------------- items


@dataclass
class Item:
    """A launch (or a runtime-only piece of one) from the input, to be merged into the store."""

    events: list[Event]
    stream: tuple
    launch: Launch | None = None  # None for a runtime-only piece
    meta: LaunchMeta | None = None  # for imports: what the other store knew
    continuation: bool = False  # its start is not in this input
    span: BatchSpan | None = None  # its batch lines (runtime KV pressure)

    @property
    def launch_id(self) -> str | None:
        return self.launch.launch_id if self.launch is not None else None

    @property
    def host(self) -> str | None:
        return self.launch.host if self.launch is not None else self.stream[0]

    def first_ts(self) -> str | None:
        first = next((e.ts for e in self.events if e.ts), None)
        if self.span is not None and self.span.first and (first is None or self.span.first < first):
            return self.span.first
        return first


def _stream_with_host(stream: tuple, host: str | None) -> tuple:
    if host and not stream[0]:
        return (host,) + tuple(stream[1:])
    return tuple(stream)


def _is_continuation(events: Sequence[Event]) -> bool:
    return not any(e.kind in OPENING_KINDS for e in events)


def _relabel(launch: Launch, host: str | None) -> None:
    """Give a launch without a host the ``--host`` one (and the id that goes with it)."""
    if host and not launch.host:
        launch.host = host
        launch.launch_id = stable_launch_id(launch, launch.events)


def reassemble(events: list[Event], stream: tuple, version: str | None) -> Launch:
    source = next((e.source for e in events if e.source), "")
    asm = LaunchAssembler(source, tuple(stream))
    for ev in events:
        asm.add(ev)
    return asm.finish(version)


def _carry_ts(events: Sequence[Event]) -> list[str]:
    out, last = [], ""
    for ev in events:
        if ev.ts and len(ev.ts) > 12:
            last = ev.ts
        out.append(last)
    return out


def merge_events(old: list[Event], new: list[Event]) -> tuple[list[Event], int]:
    """The union of two event lists of one launch, in log order; and how many events are new."""
    okeys = event_keys(old)
    by_key = dict(zip(okeys, old))
    nkeys = event_keys(new)
    added = [ev for k, ev in zip(nkeys, new) if k not in by_key]
    if not added:
        return old, 0
    nset = set(nkeys)
    if all(k in nset for k in okeys):
        # The new list covers the old one: its order, the stored events where they are the same line.
        return [by_key.get(k, ev) for k, ev in zip(nkeys, new)], len(added)
    ots, nts = _carry_ts(old), _carry_ts(added)
    merged: list[Event] = []
    i = j = 0
    while i < len(old) or j < len(added):
        if j >= len(added) or (i < len(old) and ots[i] <= nts[j]):
            merged.append(old[i])
            i += 1
        else:
            merged.append(added[j])
            j += 1
    return merged, len(added)


# ---------------------------------------------------------------------------- parsing


@dataclass
class ParsedSource:
    name: str
    kind: str
    fmt: str
    content_hash: str | None
    bytes: int | None
    counts: Any
    items: list[Item]
    unrecognized: list
    warnings: list[str]
    cursors: dict[tuple, str]  # (host, unit) -> last __CURSOR
    cursor_by_line: dict[int, str]
    orphan_lines: int = 0


def source_kind(src) -> str:
    """file, stdin, journal (a journalctl query) or text (in memory)."""
    if getattr(src, "kind", None):
        return src.kind
    name = str(getattr(src, "name", ""))
    if "journalctl" in type(src).__name__.lower() or name.startswith("journalctl "):
        return "journal"
    if name == "-":
        return "stdin"
    if name and Path(name).is_file():
        return "file"
    return "text"


def prehash(src) -> str | None:
    """Content hash of a file input before parsing it (the same hash the source computes)."""
    opener = getattr(src, "_opener", None)
    if opener is None or getattr(src, "name", "-") == "-" or getattr(src, "size", None) is None:
        return None
    if not Path(src.name).is_file():
        return None
    h = hashlib.sha256()
    try:
        fh = opener()
        try:
            while True:
                chunk = fh.read(1 << 20)
                if not chunk:
                    break
                h.update(chunk)
        finally:
            fh.close()
    except OSError:
        return None
    return h.hexdigest()


class _Progress:
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
        self._bar = None
        self._stop = None
        if enabled:
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

            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TextColumn("{task.fields[lines]:,} lines"),
                TextColumn("{task.fields[lps]:,.0f} lines/s"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            name = Path(str(src.name)).name or str(src.name)
            self._task = self._bar.add_task(name[-40:], total=size, lines=0, lps=0.0)
            self._bar.start()
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()

    def tick(self) -> None:
        """Kept for callers that count records themselves; the poller does the work."""

    def _poll(self) -> None:
        while not self._stop.wait(0.25):
            self._update()

    def _update(self) -> None:
        task = self._bar.tasks[0]
        elapsed = task.elapsed or 0.0
        lines = self.sp.counts.total if self.sp is not None else 0
        self._bar.update(
            self._task,
            completed=getattr(self.src, "bytes_read", 0),
            lines=lines,
            lps=lines / elapsed if elapsed > 0 else 0.0,
        )

    def close(self) -> None:
        if self._bar is not None:
            self._stop.set()
            self._thread.join(timeout=1.0)
            self._update()
            self._bar.stop()


BATCH_KINDS = frozenset({"decode_batch", "prefill_batch"})


def _store_parser_class():
    """A StreamParser that also counts batch lines per second for each launch (see store.runtime)."""
    from logparse.pipeline import StreamParser

    class StoreParser(StreamParser):
        def on_batch(self, asm, ev):
            counts = getattr(asm, "store_batch_ts", None)
            if counts is None:
                counts = asm.store_batch_ts = Counter()
            counts[ev.ts] += 1

    return StoreParser


def parse_source(src, opts: IngestOptions) -> ParsedSource:
    from logparse.grammar import bulk as bulk_mod

    parser_cls = _store_parser_class()
    sp = parser_cls(src.name, opts.sglang_version)
    cursors: dict[tuple, str] = {}
    cursor_by_line: dict[int, str] = {}
    kind = source_kind(src)
    progress = _Progress(src, opts.progress, sp)
    try:
        if kind == "file" and (getattr(src, "size", None) or 0) >= BULK_MIN_BYTES and bulk_mod.supported(src):
            # Whole files: the vectorized path (batch lines arrive as aggregates only).
            bulk_mod.BulkReader(src, sp).run()
        else:
            for rec in src.records():
                progress.tick()
                if rec.cursor:
                    cursors[(rec.host or opts.host, rec.unit)] = rec.cursor
                    cursor_by_line[rec.line_no] = rec.cursor
                sp.feed(rec)
    finally:
        progress.close()
    launches, counts, unrec, warns = sp.finish()
    asms = sp.assemblers
    if asms is None or len(asms) != len(launches):
        asms = [None] * len(launches)
    items: list[Item] = []
    for launch, asm in zip(launches, asms):
        _relabel(launch, opts.host)
        items.append(
            Item(
                events=list(launch.events),
                stream=_stream_with_host((launch.host, launch.unit, launch.boot, launch.pid), opts.host),
                launch=launch,
                continuation=_is_continuation(launch.events),
                span=BatchSpan.from_runtime(launch.runtime, None, getattr(asm, "store_batch_ts", None)),
            )
        )
    orphan_lines = 0
    for asm in getattr(sp, "orphans", []):
        agg = asm.runtime.to_dict() if hasattr(asm, "runtime") else {}
        orphan_lines += len(asm.events) + int(agg.get("batch_lines") or 0)
        items.append(
            Item(
                events=list(asm.events),
                stream=_stream_with_host(tuple(asm.stream), opts.host),
                continuation=True,
                span=BatchSpan.from_runtime(agg, None, getattr(asm, "store_batch_ts", None)),
            )
        )
    warnings = list(getattr(src, "warnings", []))
    warnings += [w for w in warns if "started before this input begins" not in w]
    return ParsedSource(
        name=src.name,
        kind=kind,
        fmt=getattr(src, "fmt", "plain"),
        content_hash=getattr(src, "content_hash", None),
        bytes=getattr(src, "bytes_read", None),
        counts=counts,
        items=items,
        unrecognized=unrec,
        warnings=warnings,
        cursors=cursors,
        cursor_by_line=cursor_by_line,
        orphan_lines=orphan_lines,
    )


def source_id_for(name: str, content_hash: str | None) -> str:
    return hashlib.sha256(f"{name}\x00{content_hash or ''}".encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------- matching


class _UnionFind:
    def __init__(self):
        self.parent: dict = {}

    def find(self, x):
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _compatible(item: Item, host, pid, boot) -> bool:
    ih, _, iboot, ipid = item.stream
    ih = item.host or ih
    if ih and host and ih != host:
        return False
    if ipid is not None and pid is not None and ipid != pid:
        return False
    return not (iboot and boot and iboot != boot)


def _days_between(a: str, b: str) -> float:
    try:
        return abs((datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()) / 86400.0
    except ValueError:
        return 0.0


def _match(con, items: list[Item]) -> list[tuple[int, str]]:
    """(item index, stored launch_id) pairs: the same launch."""
    import pyarrow as pa

    pairs: list[tuple[int, str]] = []
    ids = [it.launch_id for it in items if it.launch_id]
    if ids:
        known = {
            r[0]
            for r in con.execute(
                "SELECT launch_id FROM launches WHERE launch_id IN (SELECT unnest(?::VARCHAR[]))", [ids]
            ).fetchall()
        }
        pairs += [(i, it.launch_id) for i, it in enumerate(items) if it.launch_id in known]
    probe_item, probe_hash = [], []
    for i, it in enumerate(items):
        for ev in it.events:
            if ev.ts:
                probe_item.append(i)
                probe_hash.append(line_hash(ev.ts, ev.text))
    if probe_item:
        con.register("_probe", pa.table({"item": pa.array(probe_item, pa.int64()), "line_hash": probe_hash}))
        try:
            rows = con.execute(
                "WITH m AS (SELECT DISTINCT p.item, e.launch_id FROM (SELECT DISTINCT item, line_hash FROM _probe) p "
                "JOIN events e ON e.line_hash = p.line_hash) "
                "SELECT m.item, l.launch_id, l.host, l.pid, l.boot, "
                "(SELECT min(s.line_hash) FROM events s WHERE s.launch_id = l.launch_id AND s.kind = 'server_args') "
                "FROM m JOIN launches l ON l.launch_id = m.launch_id"
            ).fetchall()
        finally:
            con.unregister("_probe")
        for i, lid, host, pid, boot, sa_hash in rows:
            # Two starts print one server_args line each: different ones are different launches,
            # whatever other lines they share (the nodes of a multi-node launch start in step).
            mine = next((line_hash(e.ts, e.text) for e in items[i].events if e.kind == "server_args"), None)
            if mine and sa_hash and mine != sa_hash:
                continue
            if _compatible(items[i], host, pid, boot):
                pairs.append((i, lid))
    matched = {i for i, _ in pairs}
    for i, it in enumerate(items):
        if i in matched or not it.continuation:
            continue
        host, _unit, boot, pid = it.stream
        host = it.host or host
        if pid is None and not boot:
            continue  # no process identity (a plain file): only shared lines can tell
        rows = con.execute(
            "SELECT launch_id, started_at_text, unit, boot FROM launches WHERE host IS NOT DISTINCT FROM ? "
            "AND pid IS NOT DISTINCT FROM ? ORDER BY started_at DESC NULLS LAST, started_at_text DESC NULLS LAST",
            [host, pid],
        ).fetchall()
        # Boot must agree when both sides know it.  The unit is not compared: a short journal
        # rendering names the syslog identifier (python3) unless systemd's "Started" line is in
        # the window.  Without a boot id, a pid is trusted for 30 days (pids are reused).
        first = it.first_ts()
        for lid, started, _u, b in rows:
            if boot and b and b != boot:
                continue
            if first is not None and started is not None and started > first:
                continue
            if not (boot and b) and first and started and _days_between(started, first) > 30:
                continue
            pairs.append((i, lid))
            break
    return pairs


# ---------------------------------------------------------------------------- applying


@dataclass
class _Result:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    dropped_lines: int = 0
    touched: list[str] = field(default_factory=list)  # final launch ids (added, updated or unchanged)
    final_of: dict[str, str] = field(default_factory=dict)  # an input launch id -> its id in the store


def _merge_stream(a: tuple, b: tuple) -> tuple:
    return tuple(x if x not in (None, "") else y for x, y in zip(a, b))


def apply_items(
    con,
    items: list[Item],
    *,
    source_id: str | None,
    opts: IngestOptions,
    now: datetime,
    cursors: dict[int, str] | None = None,
    source_name: str | None = None,
) -> _Result:
    """Merge items into the store inside the caller's transaction; bulk writes through Arrow."""
    import pyarrow as pa

    from logparse.store.load import fetch_launches

    res = _Result()
    if not items:
        return res

    def origin(ev: Event) -> tuple[str | None, str | None]:
        for it in items:
            if it.meta is not None and id(ev) in it.meta.event_origin:
                return it.meta.event_origin[id(ev)]
        cursor = cursors.get(ev.line_no) if cursors and ev.source == source_name else None
        return (source_id, cursor)

    uf = _UnionFind()
    for i in range(len(items)):
        uf.find(("i", i))
    for i, lid in _match(con, items):
        uf.union(("i", i), ("s", lid))
    groups: dict[Any, list] = {}
    for node in list(uf.parent):
        groups.setdefault(uf.find(node), []).append(node)
    stored_ids = [n[1] for nodes in groups.values() for n in nodes if n[0] == "s"]
    stored = fetch_launches(con, stored_ids)

    finals: list[Launch] = []
    metas: list[LaunchMeta] = []
    delete_ids: set[str] = set()
    relink: dict[str, str] = {}  # old id -> final id

    def item_span(it: Item) -> BatchSpan:
        if it.span is not None:
            return it.span
        if it.launch is not None:
            return BatchSpan.from_runtime(it.launch.runtime, it.meta.batch_edges if it.meta else None)
        return BatchSpan()

    for nodes in groups.values():
        s_ids = sorted(
            (n[1] for n in nodes if n[0] == "s" and n[1] in stored),
            key=lambda lid: (stored[lid][0].started_at or "", lid),
        )
        its = [items[n[1]] for n in sorted(n for n in nodes if n[0] == "i")]
        if not s_ids:
            launch_items = [it for it in its if it.launch is not None]
            if not launch_items:
                res.dropped_lines += sum(len(it.events) + item_span(it).lines for it in its)
                continue
            span = BatchSpan()
            for it in its:
                span = rtm.merge(span, item_span(it))
            if len(its) == 1:
                final = its[0].launch
            else:
                evs: list[Event] = []
                stream = launch_items[0].stream
                for it in its:
                    evs, _ = merge_events(evs, it.events)
                    stream = _merge_stream(stream, it.stream)
                final = reassemble(evs, stream, opts.sglang_version)
                final.runtime = rtm.apply(final.runtime, span)
            meta = _new_meta(its, source_id, opts, now)
            meta.batch_edges = span.edges()
            for ev in final.events:
                if id(ev) not in meta.event_origin:
                    meta.event_origin[id(ev)] = origin(ev)
            finals.append(final)
            metas.append(meta)
            res.added += 1
            res.touched.append(final.launch_id)
            res.final_of.update({it.launch_id: final.launch_id for it in its if it.launch_id})
            continue
        base, base_meta = stored[s_ids[0]]
        events = list(base.events)
        origin_map = dict(base_meta.event_origin)
        stream = (base.host, base.unit, base.boot, base.pid)
        labels = dict(base_meta.labels)
        version_given = base_meta.sglang_version_given
        ingested_at = base_meta.ingested_at
        first_source = base_meta.source_id
        base_span = BatchSpan.from_runtime(base.runtime, base_meta.batch_edges)
        span = base_span
        added_events = 0
        for lid in s_ids[1:]:
            other, other_meta = stored[lid]
            events, n = merge_events(events, other.events)
            added_events += n
            span = rtm.merge(span, BatchSpan.from_runtime(other.runtime, other_meta.batch_edges))
            origin_map.update(other_meta.event_origin)
            stream = _merge_stream(stream, (other.host, other.unit, other.boot, other.pid))
            labels = {**other_meta.labels, **labels}
            version_given = version_given or other_meta.sglang_version_given
            if other_meta.ingested_at and (ingested_at is None or other_meta.ingested_at < ingested_at):
                ingested_at, first_source = other_meta.ingested_at, other_meta.source_id
        for it in its:
            events, n = merge_events(events, it.events)
            added_events += n
            span = rtm.merge(span, item_span(it))
            stream = _merge_stream(stream, it.stream)
            if it.meta is not None:
                origin_map.update(it.meta.event_origin)
                labels = {**it.meta.labels, **labels}
                version_given = version_given or it.meta.sglang_version_given
        labels.update(opts.labels)
        if opts.sglang_version:
            version_given = opts.sglang_version
        same_version = version_given == base_meta.sglang_version_given
        same_runtime = (
            span.lines == base_span.lines
            and span.first == base_span.first
            and span.last == base_span.last
            and span.peaks == base_span.peaks
        )
        if len(s_ids) == 1 and added_events == 0 and same_runtime and labels == base_meta.labels and same_version:
            res.unchanged += 1
            res.touched.append(s_ids[0])
            res.final_of.update({it.launch_id: s_ids[0] for it in its if it.launch_id})
            continue
        final = reassemble(events, stream, version_given)
        final.runtime = rtm.apply(final.runtime, span)
        meta = LaunchMeta(
            source_id=first_source or source_id,
            labels=labels,
            sglang_version_given=version_given,
            ingested_at=ingested_at or now,
            updated_at=now,
            event_origin=origin_map,
            batch_edges=span.edges(),
        )
        for ev in final.events:
            if id(ev) not in meta.event_origin:
                meta.event_origin[id(ev)] = origin(ev)
        finals.append(final)
        metas.append(meta)
        delete_ids.update(s_ids)
        for lid in s_ids:
            relink[lid] = final.launch_id
        res.updated += 1
        res.touched.append(final.launch_id)
        res.final_of.update({it.launch_id: final.launch_id for it in its if it.launch_id})

    delete_ids.update(launch.launch_id for launch in finals)
    links: set[tuple[str, str]] = set()
    if relink:
        for lid, sid in con.execute(
            "SELECT launch_id, source_id FROM launch_sources WHERE launch_id IN (SELECT unnest(?::VARCHAR[]))",
            [list(relink)],
        ).fetchall():
            links.add((relink[lid], sid))
    if delete_ids:
        con.register("_del", pa.table({"launch_id": sorted(delete_ids)}))
        try:
            for table in ("rank_memory", "events", "runtime_stats", "launch_args", "launch_sources", "launches"):
                con.execute(f"DELETE FROM {table} WHERE launch_id IN (SELECT launch_id FROM _del)")
        finally:
            con.unregister("_del")
    if finals:
        fr = frames(finals, metas)
        for table, df in fr.items():
            if df.height:
                con.register("_rows", df.to_arrow())
                try:
                    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows")
                finally:
                    con.unregister("_rows")
    if source_id:
        links.update((lid, source_id) for lid in res.touched)
    if links:
        existing = set()
        touched_ids = sorted({launch_id for launch_id, _ in links})
        for lid, sid in con.execute(
            "SELECT launch_id, source_id FROM launch_sources WHERE launch_id IN (SELECT unnest(?::VARCHAR[]))",
            [touched_ids],
        ).fetchall():
            existing.add((lid, sid))
        new_links = sorted(links - existing)
        if new_links:
            con.register(
                "_links", pa.table({"launch_id": [a for a, _ in new_links], "source_id": [b for _, b in new_links]})
            )
            try:
                con.execute("INSERT INTO launch_sources BY NAME SELECT * FROM _links")
            finally:
                con.unregister("_links")
    return res


def _new_meta(its: list[Item], source_id: str | None, opts: IngestOptions, now: datetime) -> LaunchMeta:
    imported = next((it.meta for it in its if it.meta is not None), None)
    if imported is not None:
        meta = LaunchMeta(
            source_id=imported.source_id,
            labels={**imported.labels, **opts.labels},
            sglang_version_given=opts.sglang_version or imported.sglang_version_given,
            ingested_at=imported.ingested_at or now,
            updated_at=now,
        )
        for it in its:
            if it.meta is not None:
                meta.event_origin.update(it.meta.event_origin)
        return meta
    return LaunchMeta(
        source_id=source_id,
        labels=dict(opts.labels),
        sglang_version_given=opts.sglang_version,
        ingested_at=now,
        updated_at=now,
    )


# ---------------------------------------------------------------------------- journal cursors


def cursor_realtime(cursor: str) -> int | None:
    for part in cursor.split(";"):
        if part.startswith("t="):
            try:
                return int(part[2:], 16)
            except ValueError:
                return None
    return None


def journal_scope(unit: str | None, directory: str | None, jfile: str | None) -> str:
    return f"unit={unit or '*'};directory={directory or ''};file={jfile or ''}"


def stored_cursor(con, scope: str, host: str | None = None) -> str | None:
    """The cursor to resume a journal query from: the oldest of its (host, unit) cursors."""
    rows = con.execute("SELECT cursor, realtime_us, host FROM journal_cursors WHERE scope = ?", [scope]).fetchall()
    rows = [r for r in rows if host is None or r[2] == host]
    if not rows:
        return None
    rows.sort(key=lambda r: (r[1] is None, r[1] or 0))
    return rows[0][0]


def save_cursors(con, scope: str, cursors: dict[tuple, str], now: datetime) -> None:
    import pyarrow as pa

    if not cursors:
        return
    hosts = [h for h, _ in cursors]
    units = [u for _, u in cursors]
    values = list(cursors.values())
    con.register(
        "_cur",
        pa.table(
            {
                "host": pa.array(hosts, pa.string()),
                "unit": pa.array(units, pa.string()),
                "cursor": values,
                "realtime_us": pa.array([cursor_realtime(c) for c in values], pa.int64()),
            }
        ),
    )
    try:
        con.execute(
            "DELETE FROM journal_cursors WHERE scope = ? AND (host, unit) IN (SELECT (host, unit) FROM _cur)", [scope]
        )
        con.execute(
            "INSERT INTO journal_cursors (host, unit, cursor, updated_at, scope, realtime_us) "
            "SELECT host, unit, cursor, ?, ?, realtime_us FROM _cur",
            [now, scope],
        )
    finally:
        con.unregister("_cur")


# ---------------------------------------------------------------------------- one input


class WriteLease:
    """The store's write connection, held across small inputs and released often.

    Opening and closing DuckDB costs tens of milliseconds, so consecutive small inputs
    share one connection; but it is closed after ``LEASE_S`` seconds of use and before a
    large input is parsed, so that another process waiting for the lock gets its turn.
    """

    LEASE_S = 1.0

    def __init__(self, path: Path, lock_timeout: float):
        self.path = path
        self.lock_timeout = lock_timeout
        self.con = None
        self._since = 0.0

    def get(self):
        import time

        if self.con is None:
            self.con = dbm.open_store(self.path, write=True, lock_timeout=self.lock_timeout, create=True)
            self._since = time.monotonic()
        return self.con

    def maybe_release(self, force: bool = False) -> None:
        import time

        if self.con is not None and (force or time.monotonic() - self._since > self.LEASE_S):
            self.close()

    def close(self) -> None:
        if self.con is not None:
            con, self.con = self.con, None
            con.close()


def ingest_parsed(
    lease: WriteLease,
    ps: ParsedSource,
    opts: IngestOptions,
    *,
    journal_scope_key: str | None = None,
    known_hashes: set[str] | None = None,
) -> SourceOutcome:
    """Write one parsed input in one transaction."""
    import duckdb

    try:
        return _ingest_parsed(lease, ps, opts, journal_scope_key=journal_scope_key, known_hashes=known_hashes)
    except duckdb.IOException as exc:
        lease.close()
        raise dbm.StoreCorrupt(f"{lease.path}: writing to the store failed ({dbm._short(exc)})") from None
    except BaseException:
        lease.close()
        raise


def _ingest_parsed(
    lease: WriteLease,
    ps: ParsedSource,
    opts: IngestOptions,
    *,
    journal_scope_key: str | None,
    known_hashes: set[str] | None,
) -> SourceOutcome:
    import pyarrow as pa

    now = datetime.now()
    sid = source_id_for(ps.name, ps.content_hash)
    has_content = ps.counts.parsed > 0 or bool(ps.items)
    con = lease.get()
    with dbm.transaction(con):  # (an early return commits the empty transaction)
        if (
            ps.content_hash
            and con.execute("SELECT 1 FROM sources WHERE content_hash = ? LIMIT 1", [ps.content_hash]).fetchall()
        ):
            if known_hashes is not None:
                known_hashes.add(ps.content_hash)
            return SourceOutcome(ps.name, "skipped", message="already in the store (same content)")
        res = (
            apply_items(
                con, ps.items, source_id=sid, opts=opts, now=now, cursors=ps.cursor_by_line, source_name=ps.name
            )
            if has_content
            else _Result()
        )
        stored = bool(res.touched)
        if stored:
            warnings = list(ps.warnings)
            src_host = opts.host or next((it.host for it in ps.items if it.host), None)
            con.register(
                "_src",
                pa.table(
                    {
                        "source_id": [sid],
                        "path": [ps.name],
                        "kind": [ps.kind],
                        "format": [ps.fmt],
                        "content_hash": [ps.content_hash],
                        "bytes": pa.array([ps.bytes], pa.int64()),
                        "lines": pa.array([ps.counts.total], pa.int64()),
                        "parsed": pa.array([ps.counts.parsed], pa.int64()),
                        "noise": pa.array([ps.counts.noise], pa.int64()),
                        "unrecognized": pa.array([ps.counts.unrecognized], pa.int64()),
                        "ingested_at": pa.array([now], pa.timestamp("us")),
                        "host": pa.array([src_host], pa.string()),
                        "labels": [to_json(opts.labels)],
                        "n_launches": pa.array([len(res.touched)], pa.int32()),
                        "warnings": [to_json(warnings)],
                        "logparse_version": [_version()],
                    }
                ),
            )
            try:
                con.execute("INSERT INTO sources BY NAME SELECT * FROM _src")
            finally:
                con.unregister("_src")
            if ps.unrecognized:
                con.register(
                    "_unrec",
                    pa.table(
                        {
                            "source_id": [sid] * len(ps.unrecognized),
                            "line_no": pa.array([u.line_no for u in ps.unrecognized], pa.int64()),
                            "reason": [u.reason for u in ps.unrecognized],
                            "text": [u.text for u in ps.unrecognized],
                        }
                    ),
                )
                try:
                    con.execute("INSERT INTO unrecognized BY NAME SELECT * FROM _unrec")
                finally:
                    con.unregister("_unrec")
        if journal_scope_key is not None:
            save_cursors(con, journal_scope_key, ps.cursors, now)
    if known_hashes is not None and ps.content_hash and stored:
        known_hashes.add(ps.content_hash)
    if not has_content:
        return SourceOutcome(ps.name, "empty", message="no SGLang lines")
    if not stored:
        return SourceOutcome(
            ps.name,
            "unattached",
            dropped_lines=res.dropped_lines,
            message="only lines of a launch that started before this input and is not in the store",
        )
    return SourceOutcome(
        ps.name,
        "stored",
        added=res.added,
        updated=res.updated,
        unchanged=res.unchanged,
        dropped_lines=res.dropped_lines,
    )


def _version() -> str:
    from logparse import __version__

    return __version__


def known_content_hashes(path: Path, lock_timeout: float) -> set[str]:
    return known_content(path, lock_timeout)[0]


def known_content(path: Path, lock_timeout: float) -> tuple[set[str], set[int]]:
    """Content hashes and byte sizes of the stored sources (a file whose size matches none
    cannot be a re-ingest, so it is not read twice)."""
    try:
        with dbm.connection(path, write=False, lock_timeout=lock_timeout) as con:
            rows = con.execute(
                "SELECT DISTINCT content_hash, bytes FROM sources WHERE content_hash IS NOT NULL"
            ).fetchall()
            return {r[0] for r in rows}, {r[1] for r in rows if r[1] is not None}
    except dbm.StoreMissing:
        return set(), set()


def ingest_sources(
    path: Path,
    sources: Iterable,
    opts: IngestOptions,
    *,
    journal_scope_key: str | None = None,
    on_outcome: Callable[[SourceOutcome], None] | None = None,
) -> IngestReport:
    """Parse and store each source in turn (one transaction each)."""
    report = IngestReport()
    known, known_sizes = known_content(path, opts.lock_timeout)
    lease = WriteLease(path, opts.lock_timeout)
    try:
        for src in sources:
            size = getattr(src, "size", None)
            h = prehash(src) if size is None or size in known_sizes else None
            if h and h in known:
                out = SourceOutcome(src.name, "skipped", message="already in the store (same content)")
            else:
                size = getattr(src, "size", None)
                if size is None or size >= PROGRESS_MIN_BYTES:
                    lease.maybe_release(force=True)  # do not hold the lock while parsing a large input
                ps = parse_source(src, opts)
                out = ingest_parsed(lease, ps, opts, journal_scope_key=journal_scope_key, known_hashes=known)
                if out.status == "stored":
                    report.warnings.extend(ps.warnings)
                lease.maybe_release()
            report.sources.append(out)
            if on_outcome is not None:
                on_outcome(out)
    finally:
        lease.close()
    return report

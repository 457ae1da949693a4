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
from typing import TYPE_CHECKING, Any

from logparse.grammar.events import Event
from logparse.launches.assemble import LaunchAssembler
from logparse.launches.identity import launch_id, make_distinct
from logparse.launches.model import Launch
from logparse.launches.vllm_assemble import VllmLaunchAssembler
from logparse.store import db as dbm
from logparse.store import rebuild, sequence
from logparse.store import runtime as rtm
from logparse.store.frames import LaunchMeta, event_keys, frames, line_hash, to_json
from logparse.store.runtime import BatchSpan
from logparse.text import terminal_text, valid_text

if TYPE_CHECKING:
    import threading

    from rich.progress import Progress, TaskID

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

    def __post_init__(self) -> None:
        # names from the command line: valid text before they are stored (logparse.text)
        self.host = valid_text(self.host) if self.host is not None else None
        self.labels = {valid_text(k): valid_text(v) for k, v in self.labels.items()}


@dataclass
class SourceOutcome:
    name: str
    status: str  # stored | skipped | empty (no SGLang lines) | unattached | imported | binary (not read)
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
        binary = sum(1 for s in self.sources if s.status == "binary")
        if binary:
            text += f"; {binary} binary file(s) met in a directory not read"
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


def is_continuation(events: Sequence[Event]) -> bool:
    return not any(e.kind in OPENING_KINDS for e in events)


def _relabel(launch: Launch, host: str | None) -> None:
    """Give a launch without a host the ``--host`` one (and the id that goes with it)."""
    if host and not launch.host:
        launch.host = host
        launch.launch_id = launch_id(launch)


def reassemble(events: list[Event], stream: tuple, version: str | None, ordinal: int | None = None) -> Launch:
    source = next((e.source for e in events if e.source), "")
    if any(e.kind.startswith("vllm_") for e in events):
        vasm = VllmLaunchAssembler(source, tuple(stream))
        for ev in events:
            vasm.add(ev)
        return vasm.finish(ordinal=ordinal)
    asm = LaunchAssembler(source, tuple(stream))
    for ev in events:
        asm.add(ev)
    return asm.finish(version, ordinal=ordinal)


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
    #: why the input was not read (a binary file met in a directory walk)
    skipped: str | None = None


def source_kind(src) -> str:
    """file, stdin, journal (a journalctl query) or text (in memory)."""
    if getattr(src, "kind", None):
        return src.kind
    name = str(getattr(src, "name", ""))
    if "journalctl" in type(src).__name__.lower() or name.startswith("journalctl "):
        return "journal"
    if name == "-":
        return "stdin"
    path = getattr(src, "path", None) or name  # the name as given (a file name need not be valid text)
    if path and Path(path).is_file():
        return "file"
    return "text"


def prehash(src) -> str | None:
    """Content hash of a file input before parsing it (the same hash the source computes)."""
    opener = getattr(src, "_opener", None)
    if opener is None or getattr(src, "name", "-") == "-" or getattr(src, "size", None) is None:
        return None
    if not Path(getattr(src, "path", None) or src.name).is_file():
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


@dataclass
class _Bar:
    """A progress bar that is showing, and the thread that updates it."""

    progress: Progress
    task: TaskID
    stop: threading.Event
    thread: threading.Thread


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
            console=Console(stderr=True),
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

        def on_batch_stamps(self, asm, stamps):
            frames = getattr(asm, "store_batch_frames", None)
            if frames is None:
                frames = asm.store_batch_frames = []
            frames.append(stamps)

    return StoreParser


def parse_source(src, opts: IngestOptions) -> ParsedSource:
    parser_cls = _store_parser_class()
    sp = parser_cls(src.name, opts.sglang_version)
    sp.mtime = getattr(src, "mtime", None)
    sp.ordinal_base = getattr(src, "ordinal_base", 0)
    cursors: dict[tuple, str] = {}
    cursor_by_line: dict[int, str] = {}
    kind = source_kind(src)
    _feed(src, sp, opts, kind, cursors, cursor_by_line)
    launches, counts, unrec, warns = sp.finish()
    items = _launch_items(sp, launches, opts.host)
    orphans, orphan_lines = _orphan_items(sp, opts.host)
    items += orphans
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
        skipped=getattr(src, "skipped", None),
    )


def _bulk_input(src, kind: str) -> bool:
    """A file of 4 MiB or more, or a stream (stdin, journalctl) unless it ended within its
    first 64 KiB."""
    if kind == "file":
        return (getattr(src, "size", None) or 0) >= BULK_MIN_BYTES
    if kind in ("stdin", "journal") and callable(getattr(src, "known_size", None)):
        size = src.known_size()
        return size is None or size >= BULK_MIN_BYTES
    return False


def _feed_bulk(src, sp, opts: IngestOptions, kind: str, cursors: dict[tuple, str], cursor_by_line: dict[int, str]):
    """The vectorized path; streams count their batch lines per stamp (exact merges of
    overlapping windows) and a journal keeps the cursors the record path would."""
    from logparse.grammar import bulk as bulk_mod

    def note(rec) -> None:
        if rec.cursor:
            cursor_by_line[rec.line_no] = rec.cursor

    stream = kind != "file"
    bulk_mod.BulkReader(src, sp, stamps=stream, on_record=note if stream else None).run()
    if stream:
        for (host, unit), cursor in getattr(src, "last_cursor", {}).items():
            cursors[(host or opts.host, unit)] = cursor


def _feed(src, sp, opts: IngestOptions, kind: str, cursors: dict[tuple, str], cursor_by_line: dict[int, str]) -> None:
    """Run the input through the parser (large files on the vectorized path), noting journal cursors."""
    from logparse.grammar import bulk as bulk_mod

    progress = _Progress(src, opts.progress, sp)
    try:
        if _bulk_input(src, kind) and bulk_mod.supported(src):
            # Large files and streams: the vectorized path (batch lines arrive as aggregates).
            _feed_bulk(src, sp, opts, kind, cursors, cursor_by_line)
        else:
            for rec in src.records():
                progress.tick()
                if rec.cursor:
                    cursors[(rec.host or opts.host, rec.unit)] = rec.cursor
                    cursor_by_line[rec.line_no] = rec.cursor
                sp.feed(rec)
    finally:
        progress.close()


def _launch_items(sp, launches: list[Launch], host: str | None) -> list[Item]:
    """One item per assembled launch (relabelled with ``--host``)."""
    asms = sp.assemblers
    if asms is None or len(asms) != len(launches):
        asms = [None] * len(launches)
    for launch in launches:
        _relabel(launch, host)
    make_distinct(launches)
    items: list[Item] = []
    for launch, asm in zip(launches, asms):
        items.append(
            Item(
                events=list(launch.events),
                stream=_stream_with_host((launch.host, launch.unit, launch.boot, launch.pid), host),
                launch=launch,
                continuation=is_continuation(launch.events),
                span=BatchSpan.from_runtime(launch.runtime, None, _stamps_of(asm)),
            )
        )
    return items


def _stamps_of(asm):
    """The batch lines per stamp a launch's assembler counted (record path and bulk path)."""
    return rtm.stamp_counts(getattr(asm, "store_batch_ts", None), getattr(asm, "store_batch_frames", None))


def _orphan_items(sp, host: str | None) -> tuple[list[Item], int]:
    """One item per piece of a launch that began before the input (a continuation), and their line count."""
    items: list[Item] = []
    orphan_lines = 0
    for asm in getattr(sp, "orphans", []):
        agg = asm.runtime.to_dict() if hasattr(asm, "runtime") else {}
        orphan_lines += len(asm.events) + int(agg.get("batch_lines") or 0)
        items.append(
            Item(
                events=list(asm.events),
                stream=_stream_with_host(tuple(asm.stream), host),
                continuation=True,
                span=BatchSpan.from_runtime(agg, None, _stamps_of(asm)),
            )
        )
    return items, orphan_lines


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


def _record_start(item: Item) -> str | None:
    return next((e.record_ts for e in item.events if e.record_ts), None)


def _compatible(item: Item, host, pid, boot, record_started_at: str | None = None) -> bool:
    """Can this item be (part of) the stored launch?  Every identity part both know must agree.

    Two starts can print the same text (a journal that holds a start three times): the record's
    own time tells them apart; a piece that continues a launch cannot begin before it."""
    ih, _, iboot, ipid = item.stream
    ih = item.host or ih
    if ih and host and ih != host:
        return False
    if ipid is not None and pid is not None and ipid != pid:
        return False
    if iboot and boot and iboot != boot:
        return False
    mine = _record_start(item)
    if mine and record_started_at:
        return mine >= record_started_at if item.continuation else mine == record_started_at
    return True


def _days_between(a: str, b: str) -> float:
    try:
        return abs((datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()) / 86400.0
    except ValueError:
        return 0.0


def _match_ids(con, items: list[Item]) -> list[tuple[int, str]]:
    """Items whose id is a stored launch's id, or an alias of one."""
    ids = sorted({it.launch_id for it in items if it.launch_id})
    if not ids:
        return []
    known = dict(
        con.execute(
            "SELECT launch_id, launch_id FROM launches WHERE launch_id IN (SELECT unnest(?::VARCHAR[])) "
            "UNION ALL SELECT alias, launch_id FROM launch_aliases WHERE alias IN (SELECT unnest(?::VARCHAR[]))",
            [ids, ids],
        ).fetchall()
    )
    return [(i, known[it.launch_id]) for i, it in enumerate(items) if it.launch_id in known]


def _match_lines(con, items: list[Item]) -> list[tuple[int, str]]:
    """Items sharing lines (same time and text) with a stored launch they are compatible with."""
    import pyarrow as pa

    probe_item, probe_hash = [], []
    for i, it in enumerate(items):
        for ev in it.events:
            if ev.ts:
                probe_item.append(i)
                probe_hash.append(line_hash(ev.ts, ev.text))
    if not probe_item:
        return []
    con.register("_probe", pa.table({"item": pa.array(probe_item, pa.int64()), "line_hash": probe_hash}))
    try:
        rows = con.execute(
            "WITH m AS (SELECT DISTINCT p.item, e.launch_id FROM (SELECT DISTINCT item, line_hash FROM _probe) p "
            "JOIN events e ON e.line_hash = p.line_hash) "
            "SELECT m.item, l.launch_id, l.host, l.pid, l.boot, l.record_started_at, "
            "(SELECT min(s.line_hash) FROM events s WHERE s.launch_id = l.launch_id AND s.kind = 'server_args'), "
            "l.source_ordinal, l.started_at_text "
            "FROM m JOIN launches l ON l.launch_id = m.launch_id"
        ).fetchall()
    finally:
        con.unregister("_probe")
    candidates: dict[int, list[tuple]] = {}
    for i, lid, host, pid, boot, record_start, sa_hash, ordinal, started in rows:
        # Two starts print one server_args line each: different ones are different launches,
        # whatever other lines they share (the nodes of a multi-node launch start in step).
        mine = next((line_hash(e.ts, e.text) for e in items[i].events if e.kind == "server_args"), None)
        if mine and sa_hash and mine != sa_hash:
            continue
        if _compatible(items[i], host, pid, boot, record_start):
            exact = record_start is not None and record_start == _record_start(items[i])
            candidates.setdefault(i, []).append((not exact, started or "", ordinal or 0, lid))
    return _assign(items, candidates)


def _assign(items: list[Item], candidates: dict[int, list[tuple]]) -> list[tuple[int, str]]:
    """Each item joins one stored launch: the best candidate (the same record time, else the earliest);
    one stored launch per starting item (the same start printed twice with nothing to tell the
    copies apart is two launches, matched in order), while pieces that continue a launch may share."""
    claimed: set[str] = set()
    pairs = []
    for i in sorted(candidates):
        ranked = [c[-1] for c in sorted(candidates[i])]
        if items[i].continuation:
            pairs.append((i, ranked[0]))
            continue
        free = [lid for lid in ranked if lid not in claimed]
        if free:
            claimed.add(free[0])
            pairs.append((i, free[0]))
    return pairs


def _match_process(con, item: Item) -> str | None:
    """A continuation without shared lines: the latest stored launch of the same process."""
    host, _unit, boot, pid = item.stream
    host = item.host or host
    if pid is None and not boot:
        return None  # no process identity (a plain file): only shared lines can tell
    rows = con.execute(
        "SELECT launch_id, started_at_text, unit, boot FROM launches WHERE host IS NOT DISTINCT FROM ? "
        "AND pid IS NOT DISTINCT FROM ? ORDER BY started_at DESC NULLS LAST, started_at_text DESC NULLS LAST",
        [host, pid],
    ).fetchall()
    # Boot must agree when both sides know it.  The unit is not compared: a short journal
    # rendering names the syslog identifier (python3) unless systemd's "Started" line is in
    # the window.  Without a boot id, a pid is trusted for 30 days (pids are reused).
    first = item.first_ts()
    for lid, started, _u, b in rows:
        if boot and b and b != boot:
            continue
        if first is not None and started is not None and started > first:
            continue
        if not (boot and b) and first and started and _days_between(started, first) > 30:
            continue
        return lid
    return None


def _match(con, items: list[Item]) -> list[tuple[int, str]]:
    """(item index, stored launch_id) pairs: the same launch."""
    pairs = _match_ids(con, items) + _match_lines(con, items)
    matched = {i for i, _ in pairs}
    for i, it in enumerate(items):
        if i not in matched and it.continuation:
            lid = _match_process(con, it)
            if lid is not None:
                pairs.append((i, lid))
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
    """The richest process identity of two views of one launch (a part one of them lacks is taken from the other)."""
    return tuple(x if x not in (None, "") else y for x, y in zip(a, b))


def _groups(con, items: list[Item]) -> list[tuple[list[str], list[int]]]:
    """Items and stored launches that are one launch: (stored ids, item indexes) per group."""
    uf = _UnionFind()
    for i in range(len(items)):
        uf.find(("i", i))
    for i, lid in _match(con, items):
        uf.union(("i", i), ("s", lid))
    groups: dict[Any, list] = {}
    for node in list(uf.parent):
        groups.setdefault(uf.find(node), []).append(node)
    return [
        ([n[1] for n in nodes if n[0] == "s"], sorted(n[1] for n in nodes if n[0] == "i")) for nodes in groups.values()
    ]


class _Merger:
    """Merges groups of items into the store within one transaction (see :func:`apply_items`).

    A stored launch keeps its id: what merges into it (another rendering's id, a launch found to
    be the same start) becomes an alias of it, so every id the store ever gave out resolves."""

    def __init__(self, con, items, source_id, opts, now, cursors, source_name):
        self.con, self.items, self.source_id, self.opts, self.now = con, items, source_id, opts, now
        self.cursors, self.source_name = cursors, source_name
        self.res = _Result()
        self.finals: list[Launch] = []
        self.metas: list[LaunchMeta] = []
        self.delete_ids: set[str] = set()
        self.aliases: list[tuple[str, str]] = []
        self.stored: dict[str, tuple[Launch, LaunchMeta]] = {}

    def origin(self, ev: Event) -> tuple[str | None, str | None]:
        for it in self.items:
            if it.meta is not None and id(ev) in it.meta.event_origin:
                return it.meta.event_origin[id(ev)]
        cursor = self.cursors.get(ev.line_no) if self.cursors and ev.source == self.source_name else None
        return (self.source_id, cursor)

    @staticmethod
    def item_span(it: Item) -> BatchSpan:
        if it.span is not None:
            return it.span
        if it.launch is not None:
            return BatchSpan.from_runtime(it.launch.runtime, it.meta.batch_edges if it.meta else None)
        return BatchSpan()

    def _finish(self, final: Launch, meta: LaunchMeta, its: list[Item]) -> None:
        for ev in final.events:
            if id(ev) not in meta.event_origin:
                meta.event_origin[id(ev)] = self.origin(ev)
        self.finals.append(final)
        self.metas.append(meta)
        self.res.touched.append(final.launch_id)
        self._alias_items(its, final.launch_id)

    def _alias_items(self, its: list[Item], final_id: str) -> None:
        for it in its:
            if it.launch_id:
                self.res.final_of[it.launch_id] = final_id
                if it.launch_id != final_id:
                    self.aliases.append((it.launch_id, final_id))

    def new_launch(self, its: list[Item]) -> None:
        launch_items = [it for it in its if it.launch is not None]
        launches = [it.launch for it in launch_items if it.launch is not None]
        if not launches:
            self.res.dropped_lines += sum(len(it.events) + self.item_span(it).lines for it in its)
            return
        span = BatchSpan()
        for it in its:
            span = rtm.merge(span, self.item_span(it))
        if len(its) == 1:
            final = launches[0]
        else:
            evs: list[Event] = []
            stream = launch_items[0].stream
            for it in its:
                evs, _ = merge_events(evs, it.events)
                stream = _merge_stream(stream, it.stream)
            final = reassemble(evs, stream, self.opts.sglang_version, launches[0].source_ordinal)
            final.runtime = rtm.apply(final.runtime, span)
        meta = _new_meta(its, self.source_id, self.opts, self.now)
        meta.batch_edges = span.edges()
        self.res.added += 1
        self._finish(final, meta, its)

    def merge_stored(self, s_ids: list[str], its: list[Item]) -> None:
        """Items (and maybe several stored launches) that are one stored launch."""
        stored = self.stored
        s_ids = sorted(s_ids, key=lambda lid: (stored[lid][1].ingested_at or self.now, lid))
        base, base_meta = stored[s_ids[0]]
        m = _Merge.start(base, base_meta)
        for lid in s_ids[1:]:
            m.add_stored(*stored[lid])
        for it in its:
            m.add_item(it, self.item_span(it))
        m.labels.update(self.opts.labels)
        if self.opts.sglang_version:
            m.version_given = self.opts.sglang_version
        keep = s_ids[0]
        if len(s_ids) == 1 and not m.changed(base, base_meta):
            self.res.unchanged += 1
            self.res.touched.append(keep)
            self._alias_items(its, keep)
            return
        final = reassemble(m.events, m.stream, m.version_given, base.source_ordinal)
        final.runtime = rtm.apply(final.runtime, m.span)
        if final.launch_id != keep:
            self.aliases.append((final.launch_id, keep))
        final.launch_id = keep
        meta = LaunchMeta(
            source_id=m.first_source or self.source_id,
            labels=m.labels,
            sglang_version_given=m.version_given,
            ingested_at=m.ingested_at or self.now,
            updated_at=self.now,
            event_origin=m.origin_map,
            batch_edges=m.span.edges(),
        )
        self.delete_ids.update(s_ids)
        self.aliases += [(lid, keep) for lid in s_ids[1:]]
        self.res.updated += 1
        self._finish(final, meta, its)

    def write(self, with_changes: bool = True) -> None:
        """Replace the launches written in the store; ``with_changes``: also refresh their
        deployments' ``launch_change`` (a store merge refreshes it once, after its last batch)."""
        import pyarrow as pa

        con = self.con
        self.delete_ids.update(launch.launch_id for launch in self.finals)
        deployments = sequence.deployments_of(con, self.delete_ids)
        links = self._relinked_sources()
        if self.delete_ids:
            con.register("_del", pa.table({"launch_id": sorted(self.delete_ids)}))
            try:
                for table in WRITTEN_TABLES:
                    con.execute(f"DELETE FROM {table} WHERE launch_id IN (SELECT launch_id FROM _del)")
            finally:
                con.unregister("_del")
        for table, df in frames(self.finals, self.metas).items():
            if df.height:
                con.register("_rows", df.to_arrow())
                try:
                    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows")
                finally:
                    con.unregister("_rows")
        rebuild.add_aliases(con, self.aliases, reason="the same launch, read again")
        if self.source_id:
            links.update((lid, self.source_id) for lid in self.res.touched)
        _link_sources(con, links)
        deployments |= sequence.deployments_of(con, [launch.launch_id for launch in self.finals])
        sequence.refresh(con, deployments, with_changes=with_changes)

    def _relinked_sources(self) -> set[tuple[str, str]]:
        """Sources of the stored launches merged away, linked to the launch they became."""
        gone = {a: b for a, b in self.aliases if a in self.delete_ids}
        if not gone:
            return set()
        rows = self.con.execute(
            "SELECT launch_id, source_id FROM launch_sources WHERE launch_id IN (SELECT unnest(?::VARCHAR[]))",
            [sorted(gone)],
        ).fetchall()
        return {(gone[lid], sid) for lid, sid in rows}


#: Tables an ingest rewrites for a launch (``launch_sources`` rows are kept and added to).
WRITTEN_TABLES = ("rank_memory", "events", "runtime_stats", "launch_args", "launch_budget", "rank_budget", "launches")


@dataclass
class _Merge:
    """The union of a stored launch and what else is the same launch."""

    events: list[Event]
    origin_map: dict
    stream: tuple
    labels: dict
    version_given: str | None
    ingested_at: datetime | None
    first_source: str | None
    span: BatchSpan
    base_span: BatchSpan
    added_events: int = 0

    @classmethod
    def start(cls, base: Launch, meta: LaunchMeta) -> _Merge:
        span = BatchSpan.from_runtime(base.runtime, meta.batch_edges)
        return cls(
            list(base.events),
            dict(meta.event_origin),
            (base.host, base.unit, base.boot, base.pid),
            dict(meta.labels),
            meta.sglang_version_given,
            meta.ingested_at,
            meta.source_id,
            span,
            span,
        )

    def add_stored(self, other: Launch, meta: LaunchMeta) -> None:
        self.events, n = merge_events(self.events, other.events)
        self.added_events += n
        self.span = rtm.merge(self.span, BatchSpan.from_runtime(other.runtime, meta.batch_edges))
        self.origin_map.update(meta.event_origin)
        self.stream = _merge_stream(self.stream, (other.host, other.unit, other.boot, other.pid))
        self.labels = {**meta.labels, **self.labels}
        self.version_given = self.version_given or meta.sglang_version_given
        if meta.ingested_at and (self.ingested_at is None or meta.ingested_at < self.ingested_at):
            self.ingested_at, self.first_source = meta.ingested_at, meta.source_id

    def add_item(self, it: Item, span: BatchSpan) -> None:
        self.events, n = merge_events(self.events, it.events)
        self.added_events += n
        self.span = rtm.merge(self.span, span)
        self.stream = _merge_stream(self.stream, it.stream)
        if it.meta is not None:
            self.origin_map.update(it.meta.event_origin)
            self.labels = {**it.meta.labels, **self.labels}
            self.version_given = self.version_given or it.meta.sglang_version_given

    def changed(self, base: Launch, meta: LaunchMeta) -> bool:
        s, b = self.span, self.base_span
        same_runtime = s.lines == b.lines and s.first == b.first and s.last == b.last and s.peaks == b.peaks
        same_stream = self.stream == (base.host, base.unit, base.boot, base.pid)
        return not (
            self.added_events == 0
            and same_runtime
            and same_stream
            and self.labels == meta.labels
            and self.version_given == meta.sglang_version_given
        )


def _link_sources(con, links: set[tuple[str, str]]) -> None:
    import pyarrow as pa

    if not links:
        return
    touched_ids = sorted({launch_id for launch_id, _ in links})
    existing = set(
        con.execute(
            "SELECT launch_id, source_id FROM launch_sources WHERE launch_id IN (SELECT unnest(?::VARCHAR[]))",
            [touched_ids],
        ).fetchall()
    )
    new_links = sorted(links - existing)
    if new_links:
        con.register(
            "_links", pa.table({"launch_id": [a for a, _ in new_links], "source_id": [b for _, b in new_links]})
        )
        try:
            con.execute("INSERT INTO launch_sources BY NAME SELECT * FROM _links")
        finally:
            con.unregister("_links")


def apply_items(
    con,
    items: list[Item],
    *,
    source_id: str | None,
    opts: IngestOptions,
    now: datetime,
    cursors: dict[int, str] | None = None,
    source_name: str | None = None,
    with_changes: bool = True,
) -> _Result:
    """Merge items into the store inside the caller's transaction; bulk writes through Arrow.
    ``with_changes``: also refresh ``launch_change`` for the deployments written (see ``_Merger.write``)."""
    from logparse.store.load import fetch_launches

    merger = _Merger(con, items, source_id, opts, now, cursors, source_name)
    if not items:
        return merger.res
    groups = _groups(con, items)
    merger.stored = fetch_launches(con, [lid for s_ids, _ in groups for lid in s_ids])
    for s_ids, idx in groups:
        s_ids = [lid for lid in s_ids if lid in merger.stored]
        its = [items[i] for i in idx]
        if s_ids:
            merger.merge_stored(s_ids, its)
        else:
            merger.new_launch(its)
    merger.write(with_changes)
    return merger.res


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
    except duckdb.Error as exc:  # the transaction was rolled back
        lease.close()
        damaged = dbm.damage(lease.path, exc)
        if damaged is not None:  # one clear line instead of "Current transaction is aborted"
            raise damaged from None
        root = dbm.root_error(exc)
        if isinstance(root, duckdb.IOException):
            raise dbm.StoreCorrupt(f"{lease.path}: writing to the store failed ({dbm.short_error(root)})") from None
        if root is not exc and isinstance(root, Exception):
            raise root from None
        raise
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
            _insert_source(con, ps, opts, sid, now, n_launches=len(res.touched))
            _insert_unrecognized(con, ps, sid)
        if journal_scope_key is not None:
            save_cursors(con, journal_scope_key, ps.cursors, now)
    if known_hashes is not None and ps.content_hash and stored:
        known_hashes.add(ps.content_hash)
    if ps.skipped:
        return SourceOutcome(ps.name, "binary", message=ps.skipped)
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


def _insert_source(con, ps: ParsedSource, opts: IngestOptions, sid: str, now: datetime, *, n_launches: int) -> None:
    """The ``sources`` row of an input whose launches were stored."""
    import pyarrow as pa

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
                "other_units": pa.array([ps.counts.other_units], pa.int64()),
                "ingested_at": pa.array([now], pa.timestamp("us")),
                "host": pa.array([src_host], pa.string()),
                "labels": [to_json(opts.labels)],
                "n_launches": pa.array([n_launches], pa.int32()),
                "warnings": [to_json(warnings)],
                "logparse_version": [_logparse_version()],
            }
        ),
    )
    try:
        con.execute("INSERT INTO sources BY NAME SELECT * FROM _src")
    finally:
        con.unregister("_src")


def _insert_unrecognized(con, ps: ParsedSource, sid: str) -> None:
    """The input's unrecognized lines."""
    if not ps.unrecognized:
        return
    import pyarrow as pa

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


def _logparse_version() -> str:
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

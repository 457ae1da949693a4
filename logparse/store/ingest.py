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
  the union (outcome, ranks, warnings and all), the same whatever order the inputs came in
  (:mod:`logparse.store.merge`, :mod:`logparse.store.union`);
* batch lines (``Decode batch`` / ``Prefill batch``) reach the store as aggregates, merged
  by time span so that overlapping pieces are not counted twice (``store.runtime``);
* a piece of a launch whose start is not in this input (a journal window that begins
  mid-startup or mid-run) is attached to the stored launch that shares lines with it, or
  else to the latest stored launch of the same process (host, unit, boot, pid); when there is
  none yet, it is kept (:mod:`logparse.store.pending`) until its launch arrives;
* an input that cannot be read is not stored and the others are (its outcome: ``failed``);
* with ``--journal``, the last ``__CURSOR`` per (host, unit) is kept in
  ``journal_cursors`` and the next run reads only what came after it.
"""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logparse.launches.identity import launch_id, make_distinct
from logparse.launches.model import Launch
from logparse.store import db as dbm
from logparse.store import merge, model_configs
from logparse.store import runtime as rtm
from logparse.store.frames import to_json
from logparse.store.items import Item, is_continuation
from logparse.store.merge import apply_items
from logparse.store.rows import values_sql
from logparse.store.runtime import BatchSpan
from logparse.store.tally import RunTally, Step
from logparse.text import console_style, terminal_text, valid_text

if TYPE_CHECKING:
    import threading

    from rich.progress import Progress, TaskID

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
    #: stored | skipped | empty (no engine lines) | pending (kept until its launch's start arrives) |
    #: unattached | imported | binary (not read) | failed (could not be read: not stored) |
    #: model_config (a model's config.json, kept for its launches: :mod:`logparse.store.model_configs`)
    status: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    dropped_lines: int = 0
    kept_lines: int = 0  # lines of launches whose start is not in the store yet (kept until it is)
    message: str = ""
    #: launches already stored that this input showed to be part of another one (see :mod:`.tally`)
    united: int = 0
    #: what the input did to the store, launch by launch (:class:`~logparse.store.tally.RunTally`)
    lineage: list[Step] = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, name: str, status: str, lineage: list[Step], **rest: Any) -> SourceOutcome:
        """An input's outcome, its launches counted from what it did to the store."""
        t = RunTally().follow(lineage)
        return cls(name, status, t.added, t.updated, t.unchanged, united=t.united, lineage=list(lineage), **rest)


def source_dict(s: SourceOutcome) -> dict[str, Any]:
    """One input's outcome as ``ingest --json`` prints it (its lineage is the store's business)."""
    keys = ("name", "status", "added", "updated", "unchanged", "united", "dropped_lines", "kept_lines", "message")
    return {k: getattr(s, k) for k in keys}


@dataclass
class IngestReport:
    sources: list[SourceOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def tally(self) -> RunTally:
        """What the run did to the store: a launch one input added and a later one updated or
        united with another is one launch added, a launch two inputs hold is counted once."""
        return RunTally().follow(step for s in self.sources for step in s.lineage)

    @property
    def added(self) -> int:
        return self.tally().added

    @property
    def updated(self) -> int:
        return self.tally().updated

    @property
    def unchanged(self) -> int:
        return self.tally().unchanged

    @property
    def united(self) -> int:
        return self.tally().united

    @property
    def skipped(self) -> int:
        return sum(1 for s in self.sources if s.status == "skipped")

    @property
    def failed(self) -> list[SourceOutcome]:
        """The inputs that could not be read (not stored)."""
        return [s for s in self.sources if s.status == "failed"]

    @property
    def useful(self) -> bool:
        """Did the run store anything, or find it stored already?  (Else ``ingest`` exits 2.)"""
        return any(s.status in ("stored", "imported", "pending", "skipped", "unattached") for s in self.sources)

    def to_dict(self) -> dict[str, Any]:
        """The report as ``ingest --json`` prints it: the run's counts, then each input's outcome."""
        t = self.tally()
        return {
            "added": t.added,
            "updated": t.updated,
            "unchanged": t.unchanged,
            "united": t.united,
            "skipped": self.skipped,
            "failed": len(self.failed),
            "summary": self.summary(),
            "sources": [source_dict(s) for s in self.sources],
            "warnings": list(dict.fromkeys(self.warnings)),
        }

    def summary(self) -> str:
        stored = sum(1 for s in self.sources if s.status in ("stored", "imported"))
        empty = sum(1 for s in self.sources if s.status == "empty")
        t = self.tally()
        parts = [f"{t.added} launch(es) added", f"{t.updated} updated", f"{t.unchanged} unchanged"]
        if t.united:
            parts.append(f"{t.united} stored launch(es) united with another (one launch, read in pieces)")
        text = f"ingested {stored} input(s): " + ", ".join(parts)
        if self.skipped:
            text += f"; {self.skipped} input(s) skipped (already in the store)"
        pending = [s for s in self.sources if s.status == "pending"]
        if pending:
            lines = sum(s.kept_lines for s in pending)
            text += (
                f"; {len(pending)} input(s) hold only lines of launches whose start is not in the store yet "
                f"({lines} line(s) kept until it is)"
            )
        configs = sum(1 for s in self.sources if s.status == "model_config")
        if configs:
            text += f"; {configs} model file(s) (config.json, weights index) kept for their launches"
        if empty:
            text += f"; {empty} input(s) without engine lines (SGLang or vLLM) not stored"
        if self.failed:
            names = ", ".join(s.name for s in self.failed[:3]) + (", ..." if len(self.failed) > 3 else "")
            text += f"; {len(self.failed)} input(s) could not be read, not stored: {names}"
        binary = sum(1 for s in self.sources if s.status == "binary")
        if binary:
            text += f"; {binary} binary file(s) met in a directory not read"
        dropped = sum(s.dropped_lines for s in self.sources)
        if dropped:
            text += f"; {dropped} line(s) of launches whose start is in no input and not in the store were dropped"
        return text


# ---------------------------------------------------------------------------- items


def _stream_with_host(stream: tuple, host: str | None) -> tuple:
    if host and not stream[0]:
        return (host,) + tuple(stream[1:])
    return tuple(stream)


def _relabel(launch: Launch, host: str | None) -> None:
    """Give a launch without a host the ``--host`` one (and the id that goes with it)."""
    if host and not launch.host:
        launch.host = host
        launch.launch_id = launch_id(launch)


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
    #: the launches the store refused, one note each (:func:`set_aside_refused`)
    set_aside: list[str] = field(default_factory=list)


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
            console=Console(stderr=True, **console_style()),
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


def _fast_reader(src, sp, kind: str, cursor_by_line: dict[int, str]) -> Any:
    """The vectorized path of a large input, or None; a stream counts its batch lines per stamp (exact
    merges of overlapping windows) and a journal notes the cursors of the lines it reads itself."""
    from logparse.pipeline import fast_reader

    def note(rec) -> None:
        if rec.cursor:
            cursor_by_line[rec.line_no] = rec.cursor

    if not _bulk_input(src, kind):
        return None
    stream = kind != "file"
    return fast_reader(src, sp, stamps=stream, on_record=note if stream else None)


def _feed(src, sp, opts: IngestOptions, kind: str, cursors: dict[tuple, str], cursor_by_line: dict[int, str]) -> None:
    """Run the input through the parser (large files on the vectorized path), noting journal cursors."""
    progress = _Progress(src, opts.progress, sp)
    try:
        reader = _fast_reader(src, sp, kind, cursor_by_line)
        if reader is not None:
            # Large files and streams: the vectorized path (batch lines arrive as aggregates).
            reader.run()
            if kind != "file":
                for (host, unit), cursor in getattr(src, "last_cursor", {}).items():
                    cursors[(host or opts.host, unit)] = cursor
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
    if not cursors:
        return
    values = list(cursors.values())
    cur = values_sql({"host": "str", "unit": "str", "cursor": "str", "realtime_us": "int"})
    cols = [[h for h, _ in cursors], [u for _, u in cursors], values, [cursor_realtime(c) for c in values]]
    con.execute(
        f"DELETE FROM journal_cursors WHERE scope = ? AND (host, unit) IN (SELECT (host, unit) FROM ({cur}))",
        [scope, *cols],
    )
    con.execute(
        "INSERT INTO journal_cursors (host, unit, cursor, updated_at, scope, realtime_us) "
        f"SELECT host, unit, cursor, ?, ?, realtime_us FROM ({cur})",
        [now, scope, *cols],
    )


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
    """Write one parsed input in one transaction.  A launch the store refuses (a figure no bound
    caught that breaks a key or a type) is set aside with a warning, and the rest of the input is
    stored (:func:`set_aside_refused`); an input that still cannot be written fails alone."""
    import duckdb

    try:
        try:
            return _ingest_parsed(lease, ps, opts, journal_scope_key=journal_scope_key, known_hashes=known_hashes)
        except duckdb.Error as exc:
            if not refused_data(exc) or not ps.items:
                raise
            ps = set_aside_refused(lease.get(), ps, opts)
            return _ingest_parsed(lease, ps, opts, journal_scope_key=journal_scope_key, known_hashes=known_hashes)
    except duckdb.Error as exc:  # the transaction was rolled back
        lease.close()
        damaged = dbm.damage(lease.path, exc)
        if damaged is not None:  # one clear line instead of "Current transaction is aborted"
            raise damaged from None
        root = dbm.root_error(exc)
        if isinstance(root, duckdb.IOException):
            raise dbm.StoreCorrupt(f"{lease.path}: writing to the store failed ({dbm.short_error(root)})") from None
        if refused_data(root):  # one input the store refuses never stops the others
            return SourceOutcome(
                ps.name, "failed", message=f"not stored: the store refused it ({dbm.short_error(root)})"
            )
        if root is not exc and isinstance(root, Exception):
            raise root from None
        raise
    except BaseException:
        lease.close()
        raise


def refused_data(exc: BaseException) -> bool:
    """A DuckDB error caused by the data written (a key, a type, a range), not by the store."""
    import duckdb

    root = dbm.root_error(exc)
    kinds = (duckdb.ConstraintException, duckdb.ConversionException, duckdb.OutOfRangeException)
    return isinstance(root, kinds + (duckdb.InvalidInputException, duckdb.TypeMismatchException))


def set_aside_refused(con, ps: ParsedSource, opts: IngestOptions) -> ParsedSource:
    """The input without the launches the store refuses, each tried alone in a transaction rolled
    back at once; each set aside is named in the input's warnings (kept in its ``sources`` row)."""
    kept: list[Item] = []
    notes: list[str] = []
    for item in ps.items:
        why = _refusal(con, item, opts)
        if why is None:
            kept.append(item)
        else:
            notes.append(f"{_item_where(item)}: set aside, the store refused it ({why})")
    ps.warnings.extend(notes)  # the same list the caller reports (and the ``sources`` row keeps)
    return replace(ps, items=kept, set_aside=notes)


def _refusal(con, item: Item, opts: IngestOptions) -> str | None:
    """Why the store refuses this item alone (None: it takes it); nothing is kept either way."""
    import duckdb

    con.execute("BEGIN TRANSACTION")
    try:
        apply_items(con, [item], source_id=None, opts=opts, now=datetime.now())
    except duckdb.Error as exc:
        return dbm.short_error(dbm.root_error(exc)) if refused_data(exc) else None
    finally:
        con.execute("ROLLBACK")
    return None


def _item_where(item: Item) -> str:
    lines = [e.line_no for e in item.events if e.line_no is not None]
    where = f"lines {min(lines)}-{max(lines)}" if lines else "a launch"
    return where + (f" (launch {item.launch_id[:12]})" if item.launch_id else "")


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
    config = None if has_content or ps.skipped else model_configs.read_config(ps.name)
    if config is not None:
        with dbm.transaction(con):
            model_configs.keep(con, ps.name, *config, now)
        return SourceOutcome(ps.name, "model_config", message="a model's config: used for its launches")
    if not has_content and not ps.skipped and model_configs.is_weights_index(ps.name):
        return SourceOutcome(ps.name, "model_config", message="a model's weights index: read with its config.json")
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
                con,
                ps.items,
                source_id=sid,
                opts=opts,
                now=now,
                cursors=ps.cursor_by_line,
                source_name=ps.name,
                source_lines=ps.counts.total,
            )
            if has_content
            else merge.Result()
        )
        stored = bool(res.touched) or res.kept_lines > 0
        if stored:
            _insert_source(con, ps, opts, sid, now, n_launches=len(set(res.touched)))
            _insert_unrecognized(con, ps, sid)
        if journal_scope_key is not None:
            save_cursors(con, journal_scope_key, ps.cursors, now)
    if known_hashes is not None and ps.content_hash and stored:
        known_hashes.add(ps.content_hash)
    return _outcome(ps, res, has_content, stored)


def _outcome(ps: ParsedSource, res: merge.Result, has_content: bool, stored: bool) -> SourceOutcome:
    if ps.skipped:
        return SourceOutcome(ps.name, "binary", message=ps.skipped)
    if not has_content:
        return SourceOutcome(ps.name, "empty", message="no SGLang or vLLM lines")
    if not stored and ps.set_aside:
        return SourceOutcome(ps.name, "failed", message=ps.set_aside[0])
    if not stored:
        return SourceOutcome(
            ps.name,
            "unattached",
            dropped_lines=res.dropped_lines,
            message="only runtime lines of a launch that started before this input and is not in the store "
            "(no line of them can tell which launch they belong to)",
        )
    return SourceOutcome.of(
        ps.name,
        "stored" if res.touched else "pending",
        res.lineage,
        dropped_lines=res.dropped_lines,
        kept_lines=res.kept_lines,
        message=""
        if res.touched
        else "only lines of a launch whose start is not in the store yet: kept, they join it when it is ingested",
    )


def _insert_source(con, ps: ParsedSource, opts: IngestOptions, sid: str, now: datetime, *, n_launches: int) -> None:
    """The ``sources`` row of an input whose launches were stored."""
    warnings = list(ps.warnings)
    src_host = opts.host or next((it.host for it in ps.items if it.host), None)
    row = {
        "source_id": sid,
        "path": ps.name,
        "kind": ps.kind,
        "format": ps.fmt,
        "content_hash": ps.content_hash,
        "bytes": ps.bytes,
        "lines": ps.counts.total,
        "parsed": ps.counts.parsed,
        "noise": ps.counts.noise,
        "unrecognized": ps.counts.unrecognized,
        "other_units": ps.counts.other_units,
        "ingested_at": now,
        "host": src_host,
        "labels": to_json(opts.labels),
        "n_launches": n_launches,
        "warnings": to_json(warnings),
        "logparse_version": _logparse_version(),
    }
    con.execute(
        f"INSERT INTO sources ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
        list(row.values()),
    )


def _insert_unrecognized(con, ps: ParsedSource, sid: str) -> None:
    """The input's unrecognized lines."""
    if not ps.unrecognized:
        return
    unrec = values_sql({"source_id": "str", "line_no": "int", "reason": "str", "text": "str"})
    con.execute(
        f"INSERT INTO unrecognized BY NAME {unrec}",
        [
            [sid] * len(ps.unrecognized),
            [u.line_no for u in ps.unrecognized],
            [u.reason for u in ps.unrecognized],
            [u.text for u in ps.unrecognized],
        ],
    )


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
            return _known_in(con)
    except dbm.StoreMissing:
        return set(), set()


def _known_in(con) -> tuple[set[str], set[int]]:
    rows = con.execute("SELECT DISTINCT content_hash, bytes FROM sources WHERE content_hash IS NOT NULL").fetchall()
    return {r[0] for r in rows}, {r[1] for r in rows if r[1] is not None}


def _ingest_one(
    lease: WriteLease, src, opts: IngestOptions, journal_scope_key: str | None, known: set[str], report: IngestReport
) -> SourceOutcome:
    """Parse one input, then store it in one transaction.  An input that cannot be read (a file
    that vanished or cannot be opened, a read error) is not stored, and the others still are: its
    outcome says why (``failed``).  A journal query that fails raises (it is the only input)."""
    from logparse.sources import InputError

    if not _small(src):
        lease.maybe_release(force=True)  # do not hold the lock while parsing a large input
    try:
        ps = parse_source(src, opts)
    except InputError as exc:
        if source_kind(src) == "journal":
            raise  # journalctl failed: the query (and its cursor) is the caller's to handle
        return SourceOutcome(src.name, "failed", message=str(exc))
    out = ingest_parsed(lease, ps, opts, journal_scope_key=journal_scope_key, known_hashes=known)
    if out.status in ("stored", "pending", "failed"):  # (failed: the launches the store set aside)
        report.warnings.extend(ps.warnings)
    lease.maybe_release()
    return out


def _known_on(lease: WriteLease) -> tuple[set[str], set[int]]:
    """:func:`known_content` read on the write connection (a store that cannot be read refused as
    :func:`logparse.store.db.connection` refuses it)."""
    import duckdb

    try:
        return _known_in(lease.get())
    except duckdb.Error as exc:
        lease.close()
        damaged = dbm.damage(lease.path, exc)
        if damaged is not None:
            raise damaged from None
        if isinstance(exc, duckdb.IOException):
            raise dbm.StoreCorrupt(f"{lease.path}: reading the store failed ({dbm.short_error(exc)})") from None
        raise


def _small(src) -> bool:
    """An input small enough to be parsed with the write lock held (its size is known)."""
    size = getattr(src, "size", None)
    return size is not None and size < PROGRESS_MIN_BYTES


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
    lease = WriteLease(path, opts.lock_timeout)
    pending_sources = iter(sources)
    first = next(pending_sources, None)
    try:
        if first is not None and _small(first) and dbm.check_file(path):
            # a small input into a store: the write connection reads what it holds (one open, not two)
            known, known_sizes = _known_on(lease)
        else:
            known, known_sizes = known_content(path, opts.lock_timeout)
        for src in () if first is None else chain([first], pending_sources):
            size = getattr(src, "size", None)
            h = prehash(src) if size is None or size in known_sizes else None
            if h and h in known:
                out = SourceOutcome(src.name, "skipped", message="already in the store (same content)")
            else:
                out = _ingest_one(lease, src, opts, journal_scope_key, known, report)
            report.sources.append(out)
            if on_outcome is not None:
                on_outcome(out)
    finally:
        lease.close()
    return report

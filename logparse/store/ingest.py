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

This module writes: each parsed input in one transaction (:func:`ingest_parsed`; a launch the
store refuses is set aside), the inputs in turn (:func:`ingest_sources`), over one write
connection held across small inputs (:class:`WriteLease`).  What it runs: the options and
outcomes (:mod:`.ingest_types`), the parse of an input (:mod:`.ingest_parse`) with its progress
bar (:mod:`.ingest_progress`), the journal cursors (:mod:`.journal_cursors`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import Any

from logparse import engines
from logparse.store import db as dbm
from logparse.store import merge, model_configs
from logparse.store.batched import apply_input, bounded_memory
from logparse.store.frames import to_json
from logparse.store.ingest_parse import ParsedSource, parse_source, source_kind
from logparse.store.ingest_progress import PROGRESS_MIN_BYTES
from logparse.store.ingest_types import IngestOptions, IngestReport, SourceOutcome
from logparse.store.items import Item
from logparse.store.journal_cursors import save_cursors
from logparse.store.merge import apply_items
from logparse.store.rows import values_sql


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

    where: dict[str, Any] = {"journal_scope_key": journal_scope_key, "known_hashes": known_hashes}
    try:
        try:
            return _ingest_parsed(lease, ps, opts, **where)
        except duckdb.OutOfMemoryException:
            if not ps.items.spilled:
                raise
            return _ingest_parsed(lease, ps, opts, bound=False, **where)  # (see batched.bounded_memory)
        except duckdb.Error as exc:
            if not refused_data(exc) or not ps.items:
                raise
            ps = set_aside_refused(lease.get(), ps, opts)
            return _ingest_parsed(lease, ps, opts, **where)
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
    refused: list[tuple[int, int]] = []
    notes: list[str] = []
    for key, item in ps.items.keyed():
        why = _refusal(con, item, opts)
        if why is not None:
            refused.append(key)
            notes.append(f"{_item_where(item)}: set aside, the store refused it ({why})")
    ps.items.set_aside(refused)
    ps.warnings.extend(notes)  # the same list the caller reports (and the ``sources`` row keeps)
    return replace(ps, set_aside=notes)


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
    bound: bool = True,
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
    with bounded_memory(con, ps.items, bound), dbm.transaction(con):  # (an early return commits the empty transaction)
        if (
            ps.content_hash
            and con.execute("SELECT 1 FROM sources WHERE content_hash = ? LIMIT 1", [ps.content_hash]).fetchall()
        ):
            if known_hashes is not None:
                known_hashes.add(ps.content_hash)
            return SourceOutcome(ps.name, "skipped", message="already in the store (same content)")
        res = (
            apply_input(
                con, ps.items, source_id=sid, opts=opts, now=now, source_name=ps.name, source_lines=ps.counts.total
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
        return SourceOutcome(ps.name, "empty", message=f"no {engines.labels()} lines")
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


def source_id_for(name: str, content_hash: str | None) -> str:
    return hashlib.sha256(f"{name}\x00{content_hash or ''}".encode()).hexdigest()[:16]


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
    try:
        out = ingest_parsed(lease, ps, opts, journal_scope_key=journal_scope_key, known_hashes=known)
    finally:
        ps.close()
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

"""``watch``: a growing log file or the journal, written into the store as it grows.

Every line goes through the same parser and the same merge as ``ingest`` (one transaction per
write, the store opened only for that write, so ``launches``, ``query`` and another ``ingest``
keep working in between).  What a write changed is reported as the launches that became
``ready`` or ``failed`` with it.  While another process holds the store, a write waits
(:class:`StoreWait`): what was read stays pending and is written once the store is free.

**A file** (:class:`FileWatch`) is written in *windows*: bytes from the first line of the launch
in progress (per host and unit) to the last complete line.  Each window holds the whole launch
again, which is the case the store's merge is built for ("half a log, then the whole log"): the
events are united by line identity and the runtime aggregates by time, so the store ends exactly
as a plain ``ingest`` of the final file leaves it, whatever the pieces the file grew by.  Lines
keep their line numbers in the file; a window's unrecognized lines already stored by an earlier
window are not stored again.  A window is read from disk as a stream (memory: one launch's
parse).  When the file is replaced (rotation) or cut, the new content is read from its start.

**The journal** (:class:`JournalWatch`) is read with ``journalctl -f -o export --all`` from the
stored cursor (the one ``ingest --journal`` of the same unit, directory and file keeps), and
written in batches of whole entries with their cursor, as consecutive ``ingest --journal`` runs
would: a piece of a launch is attached to its launch by process (host, boot, pid).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from logparse import engines
from logparse.grammar import runtime_decoder
from logparse.launches.identity import CONTENT_LINES
from logparse.sources import Source, text_source
from logparse.sources.follow import ENDED, FileFollower, Growth, JournalFollower
from logparse.store import Store
from logparse.store import db as dbm
from logparse.store.ingest import WriteLease, ingest_parsed
from logparse.store.ingest_parse import ParsedSource, parse_source
from logparse.store.ingest_types import IngestOptions, SourceOutcome
from logparse.store.journal_cursors import journal_scope

FINISHED = ("ready", "failed")
#: An access-log line (uvicorn's ``"GET /v1/models HTTP/1.1" 200``): it changes no launch either.
_ACCESS_LINE = rb'HTTP/1\.[01]" \d{3}'
#: At most this much journal held in memory before it is written.
MAX_BATCH_BYTES = 8 << 20
#: Pending file bytes larger than this are written at once (not classified first).
CLASSIFY_MAX_BYTES = 1 << 20


@dataclass
class Written:
    """One write: the input's outcome, the launches that became ready or failed, what was read."""

    outcome: SourceOutcome
    finished: list[str] = field(default_factory=list)
    bytes: int = 0
    lines: int = 0
    warnings: list[str] = field(default_factory=list)
    #: a file: its lines written so far (the catch-up's progress; a window re-reads a launch)
    lines_so_far: int | None = None


@dataclass
class Policy:
    """When pending input is written."""

    #: seconds without new input before pending lines are written
    settle_s: float = 0.3
    #: pending runtime-only lines (batch lines, access log) are written at most this often
    runtime_interval_s: float = 60.0
    #: a file's window re-reads the launch in progress, which grows while it serves: runtime-only
    #: writes of a file also wait this many times the last write's duration, so that following a
    #: launch that has run for weeks costs at most 1/this of a core (new launches are not delayed)
    runtime_cost_factor: float = 20.0
    #: how often a file is looked at
    poll_s: float = 0.25
    #: a launch that has printed fewer startup lines than its identity takes (its first three) is
    #: written only once the input has been quiet this long (or watch stops), so that it is stored
    #: under the id a plain ingest of the whole log gives it
    young_wait_s: float = 5.0


@engines.derived
def runtime_line() -> re.Pattern[bytes]:
    """Lines that only feed runtime aggregates, so that a write of nothing else can wait
    (``runtime_interval``): every engine's runtime lines, by the first words their spec gives each
    family (``Decode batch``, ``Avg prompt throughput:``), and access-log lines."""
    words = [
        re.escape(runtime_decoder.family_word(e.name, family)).encode()
        for e in engines.all()
        for family in runtime_decoder.families(e.name)
    ]
    return re.compile(b"|".join([*words, _ACCESS_LINE]))


def runtime_only(data: bytes) -> bool:
    """Every line is a runtime line or an access-log line (nothing that changes a launch's outcome)."""
    found = runtime_line().search
    return all(not ln.strip() or found(ln) for ln in data.split(b"\n"))


# ------------------------------------------------------------------------------- one write


class StoppedWhileBusy(dbm.StoreError):
    """watch was asked to stop while the store was busy: what it read since its last write is not
    stored (the next watch reads it again: from the file, or from the stored journal cursor)."""


T = TypeVar("T")


@dataclass
class StoreWait:
    """Runs an operation on the store until no other process holds it: watch keeps what it read and
    tries again (each attempt waits up to the lock timeout, with DuckDB's lock tried again with
    backoff), saying once that the store is busy and once that it is free again; never gives up,
    except when ``stopping()`` (then :class:`StoppedWhileBusy`)."""

    note: Callable[[str], None] = lambda _msg: None
    stopping: Callable[[], bool] = lambda: False
    #: pause between attempts (each attempt itself waits the lock timeout)
    pause_s: float = 0.5

    def run(self, what: str, operation: Callable[[], T]) -> T:
        """``operation()`` once the store lets it; ``what``: what waits, for the notes."""
        started = time.monotonic()
        busy = False
        while True:
            try:
                result = operation()
            except dbm.StoreBusy as exc:
                if not busy:
                    who = exc.holder.replace(" (held by PID ", " (PID ")
                    self.note(
                        f"the store is busy: another process{who} holds it; {what} kept, trying again until it is free"
                    )
                    busy = True
                self._pause(what)
                continue
            if busy:
                self.note(f"the store is free again after {time.monotonic() - started:.0f} s")
            return result

    def _pause(self, what: str) -> None:
        deadline = time.monotonic() + self.pause_s
        while True:
            if self.stopping():
                raise StoppedWhileBusy(
                    f"stopped while the store was busy: {what} not done; the next watch reads it again "
                    "(the file from its start, the journal from the stored cursor)"
                )
            if time.monotonic() >= deadline:
                return
            time.sleep(0.05)


class StoreWriter:
    """Parses a source, then writes it in one transaction with the store open only meanwhile;
    while another process holds the store, keeps the parsed input and tries again (``wait``)."""

    def __init__(
        self,
        store: Store,
        opts: IngestOptions,
        journal_scope_key: str | None = None,
        wait: StoreWait | None = None,
    ) -> None:
        self.store, self.opts, self.scope = store, opts, journal_scope_key
        self.wait = wait or StoreWait()

    def parse(self, src, *, keep_unrecognized_after: int = 0, **window: Any) -> ParsedSource:
        """Parse a window of the input (``window``: :func:`~logparse.store.ingest_parse.parse_source`'s
        ``kind``, ``first_line`` and ``ordinal_base``)."""
        ps = parse_source(src, self.opts, **window)
        if keep_unrecognized_after:
            ps.unrecognized = [u for u in ps.unrecognized if u.line_no > keep_unrecognized_after]
        return ps

    def commit(self, ps: ParsedSource) -> Written:
        """Write a parsed input in one transaction; which launches it made ready or failed."""
        ids, procs = _candidates(ps)
        lines = f"{ps.counts.total:,} line(s) read"
        before = self.wait.run(lines, lambda: self._outcomes(ids, procs))
        out = self.wait.run(lines, lambda: self._ingest(ps))
        after = (
            self.wait.run("the outcome of what was written", lambda: self._outcomes(ids, procs))
            if out.status == "stored"
            else {}
        )
        finished = [lid for lid, o in after.items() if o in FINISHED and before.get(lid) not in FINISHED]
        warnings = ps.warnings if out.status in ("stored", "failed") else []  # failed: what was set aside
        return Written(out, finished, ps.bytes or 0, ps.counts.total, list(warnings))

    def _ingest(self, ps: ParsedSource) -> SourceOutcome:
        lease = WriteLease(self.store.path, self.opts.lock_timeout)
        try:  # the lock is taken before anything of ``ps`` is used: a busy store leaves it as it was
            return ingest_parsed(lease, ps, self.opts, journal_scope_key=self.scope)
        finally:
            lease.close()

    def _outcomes(self, ids: list[str], procs: list[tuple]) -> dict[str, str]:
        if not ids and not procs:
            return {}
        try:
            with dbm.connection(self.store.path, write=False, lock_timeout=self.opts.lock_timeout) as con:
                return launch_outcomes(con, ids, procs)
        except dbm.StoreMissing:
            return {}


def young(ps: ParsedSource) -> bool:
    """Does a launch that starts in this input show fewer startup lines than its identity takes?"""
    runtime = engines.kinds_of_every("runtime_kinds")
    for it in ps.items:
        if it.launch is None or it.continuation:
            continue
        startup = [e for e in it.events if e.kind not in runtime]
        if len(startup) < CONTENT_LINES:
            return True
    return False


def _candidates(ps: ParsedSource) -> tuple[list[str], list[tuple]]:
    """Launch ids of a parsed input, and the (host, pid) of its pieces that continue a launch."""
    ids = sorted({it.launch_id for it in ps.items if it.launch_id})
    procs = sorted({(it.host, it.stream[3]) for it in ps.items if it.continuation and it.stream[3] is not None})
    return ids, procs


def launch_outcomes(con, ids: list[str], procs: list[tuple]) -> dict[str, str]:
    """Stored launch id -> outcome, for these ids (or ids they are aliases of) and these processes."""
    rows = con.execute(
        "SELECT launch_id, outcome FROM launches WHERE launch_id IN (SELECT unnest(?::VARCHAR[])) "
        "OR launch_id IN (SELECT launch_id FROM launch_aliases WHERE alias IN (SELECT unnest(?::VARCHAR[])))",
        [ids, ids],
    ).fetchall()
    for host, pid in procs:
        rows += con.execute(
            "SELECT launch_id, outcome FROM launches WHERE host IS NOT DISTINCT FROM ? AND pid = ?", [host, pid]
        ).fetchall()
    return dict(rows)


# ------------------------------------------------------------------------------- a file


class FileWatch:
    """Windows of a growing file into the store (see the module documentation)."""

    def __init__(self, path: str, writer: StoreWriter, *, input_format: str | None = None) -> None:
        self.path = path
        self.writer = writer
        self.follower = FileFollower(path)
        self.input_format = input_format
        self.fmt: str | None = input_format
        self._reset()

    def _reset(self) -> None:
        self.win_start, self.win_line = 0, 1  # the window's first byte and its line number
        self.win_ordinal = 0  # launches of the file before the window
        self.done, self.done_lines = 0, 0  # bytes written, and the lines they hold

    def check(self) -> Growth | None:
        g = self.follower.check()
        if g is not None and g.new_generation:
            self._reset()
        return g

    @property
    def pending(self) -> tuple[int, int]:
        """Bytes ``[done, end)`` read but not written."""
        return self.done, self.follower.end

    def pending_is_runtime_only(self) -> bool:
        start, end = self.pending
        if end - start > CLASSIFY_MAX_BYTES:
            return False
        with self.follower.reader(start, end) as fh:
            return runtime_only(fh.read())

    def write(self, *, final: bool = True) -> Written | None:
        """Write the window ``[start of the launch in progress, end of the last complete line)``;
        unless ``final``, not while its newest launch is :func:`young` (None then)."""
        start, end = self.win_start, self.follower.end
        if end <= self.done:
            return None
        mtime = _mtime(self.path)
        inner = Source(self.path, lambda: self.follower.reader(start, end), self.fmt, end - start, mtime)
        window = {} if start == 0 else {"kind": "watch", "first_line": self.win_line, "ordinal_base": self.win_ordinal}
        ps = self.writer.parse(inner, keep_unrecognized_after=self.done_lines, **window)
        try:
            if not final and young(ps):
                return None
            written = self.writer.commit(ps)
            self.fmt = self.fmt or inner.fmt
            self.done_lines += self.follower.count_lines(self.done, end)
            self.done = end
            self._advance(ps, end)
        finally:
            ps.close()
        written.lines_so_far = self.done_lines
        return written

    def _advance(self, ps: ParsedSource, end: int) -> None:
        """The next window starts at the first line of the newest launch of each stream."""
        newest: dict[tuple, int] = {}
        for it in ps.items:
            la = it.launch
            if la is not None and not it.continuation and la.first_line is not None:
                key = (la.host, la.unit)
                newest[key] = max(newest.get(key, 0), la.first_line)
        if not newest:  # no launch begins here: what follows continues nothing we can place
            self.win_start, self.win_line = end, self.done_lines + 1
            return
        line = min(newest.values())
        before = [o for o in (_ordinal_before(it, line) for it in ps.items) if o is not None]
        self.win_ordinal = max([self.win_ordinal, *before])
        if line > self.win_line:
            self.win_start = self.follower.offset_of_line(self.win_start, end, line - self.win_line)
            self.win_line = line

    def close(self) -> None:
        self.follower.close()


def _ordinal_before(item, line: int) -> int | None:
    """The ordinal of an item's launch when it starts before ``line`` (a launch the window leaves)."""
    la = item.launch
    if la is None or item.continuation or (la.first_line or 0) >= line:
        return None
    return la.source_ordinal


def _mtime(path: str) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


# ------------------------------------------------------------------------------- the journal


class JournalWatch:
    """Batches of journal entries into the store, from the stored cursor on."""

    def __init__(
        self,
        writer: StoreWriter,
        unit: str | None = None,
        directory: str | None = None,
        file: str | None = None,
    ) -> None:
        self.writer = writer
        self.unit, self.directory, self.file = unit, directory, file
        self.scope = journal_scope(unit, directory, file)
        writer.scope = self.scope
        self.entries: list[bytes] = []
        self.size = 0
        # lines of the export stream written in this run: line numbers go on across batches, as in one
        # read of the stream (an entry is several lines: its fields and a blank line)
        self.read_lines = 0
        self.follower: JournalFollower | None = None
        #: the stored cursor was vacuumed away: read the query from its start (stored lines are
        #: recognised and not counted twice)
        self.ignore_cursor = False

    def start(self, *, follow: bool) -> JournalFollower:
        store = self.writer.store
        cursor = (
            None
            if self.ignore_cursor
            else self.writer.wait.run(
                "reading the stored cursor", lambda: store.journal_cursor(self.unit, self.directory, self.file)
            )
        )
        self.follower = JournalFollower(self.unit, self.directory, self.file, cursor, follow=follow)
        self.follower.start()
        return self.follower

    def take(self, entry: bytes) -> None:
        self.entries.append(entry)
        self.size += len(entry)

    @property
    def full(self) -> bool:
        return self.size >= MAX_BATCH_BYTES

    def pending_is_runtime_only(self) -> bool:
        found = runtime_line().search
        return all(found(e) for e in self.entries)

    def write(self, *, final: bool = True) -> Written | None:
        """Write the pending entries; unless ``final``, not while a launch in them is :func:`young`."""
        if not self.entries or self.follower is None:
            return None
        data = b"".join(self.entries)
        inner = text_source(self.follower.name, data, input_format="journal-export")
        ps = self.writer.parse(inner, kind="journal", first_line=self.read_lines + 1)
        try:
            if not final and not self.full and young(ps):
                return None
            written = self.writer.commit(ps)  # waits while the store is busy: the entries stay pending till then
        finally:
            ps.close()
        self.entries, self.size = [], 0
        self.read_lines += data.count(b"\n")
        if written.outcome.status == "skipped":  # the same bytes twice (cannot happen with cursors)
            written.outcome.message = "already in the store"
        return written

    def stop(self) -> list[str]:
        """Stop journalctl; its warnings."""
        f, self.follower = self.follower, None
        if f is None:
            return []
        f.stop()
        return list(f.warnings)


# ------------------------------------------------------------------------------- the loops


@dataclass
class Loop:
    """What a watch loop needs from its caller."""

    on_written: Callable[[Written], None]
    stopping: Callable[[], bool]
    policy: Policy = field(default_factory=Policy)
    #: a note for the user (waiting for a file, journalctl restarted)
    note: Callable[[str], None] = lambda _msg: None
    #: bytes and lines (journal entries) read so far, as they are read (progress of the catch-up)
    on_read: Callable[[int, int], None] = lambda _b, _n: None
    #: the input has nothing more for now: what was there when watch started is read
    on_idle: Callable[[], None] = lambda: None


def run_file(watch: FileWatch, loop: Loop, *, once: bool) -> None:
    """Follow the file until ``loop.stopping()`` (or, with ``once``, until what is there is written)."""
    p = loop.policy
    last_growth = last_write = time.monotonic()
    last_cost = 0.0
    waiting_noted = False
    while True:
        g = watch.check()
        now = time.monotonic()
        if g is None and watch.follower.fd is None and not waiting_noted:
            loop.note(f"waiting for {watch.path} to appear")
            waiting_noted = True
        if g is not None:
            last_growth, waiting_noted = now, False
            loop.on_read(g.end, 0)
            if g.new_generation and g.generation > 1:
                loop.note(f"{watch.path}: a new file (rotated or truncated): reading it from its start")
        elif watch.pending[0] == watch.pending[1]:
            loop.on_idle()
        stop = loop.stopping()
        start, end = watch.pending
        idle = now - last_growth
        if end > start and (once or stop or write_due(watch, p, idle, now - last_write, last_cost)):
            w = watch.write(final=once or stop or idle >= p.young_wait_s)
            if w is not None:
                last_cost = time.monotonic() - now
                last_write = time.monotonic()
                loop.on_written(w)
                continue
        if once or stop:
            return
        time.sleep(p.poll_s)


def write_due(watch, p: Policy, idle: float, since_write: float, last_cost: float = 0.0) -> bool:
    """Is the pending input to be written now?  At once when it holds more than runtime lines;
    runtime lines wait the runtime interval, and for a file also ``runtime_cost_factor`` × the
    last write's duration (``last_cost``)."""
    if idle < p.settle_s:
        return False
    interval = max(p.runtime_interval_s, p.runtime_cost_factor * last_cost)
    return since_write >= interval or not watch.pending_is_runtime_only()


def run_journal(watch: JournalWatch, loop: Loop, *, once: bool) -> None:
    """Follow the journal until ``loop.stopping()``; with ``once``, read what is there and return."""
    p = loop.policy
    follower = watch.start(follow=not once)
    last_write = last_entry = time.monotonic()
    try:
        while not loop.stopping():
            entry = follower.get(timeout=p.settle_s)
            now = time.monotonic()
            if entry is not None and entry != ENDED:
                watch.take(entry)
                last_entry = now
                loop.on_read(len(entry), 1)
                if watch.full:
                    last_write = _write(watch, loop, last_write)
                continue
            if entry is None:
                loop.on_idle()
                if watch.entries and (now - last_write >= p.runtime_interval_s or not watch.pending_is_runtime_only()):
                    last_write = _write(watch, loop, last_write, final=now - last_entry >= p.young_wait_s)
                continue
            last_write = _write(watch, loop, last_write)  # journalctl ended
            if follower.error:
                loop.note(follower.error)
            if follower.error and "cursor" in follower.error.lower() and not watch.ignore_cursor:
                loop.note("the stored cursor is no longer in the journal: reading the query from its start")
                watch.ignore_cursor = True
            elif once:
                return
            follower = _restart(watch, loop, delay=0.0 if watch.ignore_cursor and once else 2.0, follow=not once)
        _write(watch, loop, last_write)
    finally:
        for w in watch.stop():
            loop.note(w)


def _write(watch: JournalWatch, loop: Loop, last: float, *, final: bool = True) -> float:
    w = watch.write(final=final)
    if w is None:
        return last
    loop.on_written(w)
    return time.monotonic()


def _restart(watch: JournalWatch, loop: Loop, *, delay: float, follow: bool) -> JournalFollower:
    """journalctl ended (journald restarted, the journal rotated away): start again from the cursor."""
    for w in watch.stop():
        loop.note(w)
    if delay:
        loop.note(f"journalctl ended: starting it again from the stored cursor in {delay:g} s")
    deadline = time.monotonic() + delay
    while time.monotonic() < deadline and not loop.stopping():
        time.sleep(0.1)
    return watch.start(follow=follow)

"""Vectorized bulk path: large inputs at the speed of polars, in bounded memory.

A production log is mostly runtime lines (``Decode batch``, ``Prefill batch``, uvicorn
access lines) and other SGLang info lines; the lines that matter for launches are a few
hundred per start.  The bulk path reads an input in blocks of a few MB, splits and
classifies each block with polars (Rust), and sends to Python only the lines that need
the grammar or the stateful classifier:

* lines that mention a tracked anchor (``sglang_classify.ANCHORS``) other than batch lines;
* lines without SGLang's prefix (tracebacks, warnings, tqdm, journal markers, ...);
* lines with control characters (``\\r``, ANSI, NUL) that need cleaning;
* lines the vectorized journal-header pattern does not match.

Batch lines are reduced to per-launch runtime aggregates with vectorized regex
extraction (the same definitions as :class:`logparse.engines.sglang.assemble.RuntimeAgg`); access
lines and other prefixed lines without an anchor are counted as noise.  Results are
identical whatever the block size (``tests/engines/sglang/test_bulk.py``).

This module is the reader: which sources take the path (:func:`supported`), the input cut into
blocks of whole lines and read ahead in a thread, and each block's result applied in order to a
:class:`logparse.pipeline.StreamParser` (:class:`BulkReader`).  A block is classified by
:func:`logparse.engines.sglang.bulk_blocks.classify_block` (numpy's templates,
:mod:`.bulk_template`; polars' expressions, :mod:`.bulk_classify`; the runtime figures,
:mod:`.bulk_runtime`; export entries, :mod:`.bulk_export`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import closing
from typing import Any

from logparse.engines.sglang import bulk_export
from logparse.engines.sglang.bulk_blocks import BlockResult, block_bytes_for, classify_block
from logparse.grammar.fast import GAP, Counted, RuntimeSlice
from logparse.sources.formats.journal_export import ExportReader
from logparse.sources.lines import LineParser
from logparse.sources.streams import line_blocks

#: Formats the bulk path reads; everything else goes record by record.
BULK_FORMATS = frozenset({"plain", "journal-short-iso", "journal-short-iso-precise", "journal-json", "journal-export"})


def supported(src) -> bool:
    """Whether the fast stage reads this source's format (the size rule is the parse loop's:
    :func:`logparse.pipeline.takes_fast_stage`)."""
    try:
        return src.fmt in BULK_FORMATS and callable(getattr(src, "open_content", None))
    except Exception:  # a source that cannot even sniff: let the record path report it
        return False


def _workers_for(size: int, block_bytes: int, fmt: str = "plain") -> int:
    """Worker processes for an input: 1 (this process) unless LOGPARSE_WORKERS says otherwise.

    Measured on 2 cores (bench/run): polars already spreads a block's expressions over the
    cores and a reader thread overlaps I/O and hashing with them, so worker processes only
    add pickling and contention (1 GB short-iso 8.9 s in-process vs 10.5 s with 2 workers;
    3 GB json 19 s vs 27 s).  Kept for machines with many cores."""
    env = os.environ.get("LOGPARSE_WORKERS")
    if env is not None:
        try:
            return max(int(env), 1)
        except ValueError:
            return 1
    return 1


def _threads() -> int:
    """Blocks classified at once in threads of this process (LOGPARSE_THREADS; default 1: on the
    shared 2-core machine of bench/run two threads gave the same wall time for more CPU and memory,
    numpy's many short steps contending for the GIL)."""
    try:
        return max(int(os.environ.get("LOGPARSE_THREADS", "1")), 1)
    except ValueError:
        return 1


def _prefetch(blocks, depth: int = 2):
    """Read (and hash) the next blocks in a thread while the current one is classified.

    File reads and SHA-256 release the GIL, and so does polars: the two overlap.  At most
    ``depth`` blocks wait in the queue (bounded memory); an error in the reader is raised
    here, in the consumer."""
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def reader() -> None:
        try:
            for block in blocks:
                while not stop.is_set():
                    try:
                        q.put(block, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(done)
        except BaseException as exc:  # handed over to the consumer
            q.put(exc)

    t = threading.Thread(target=reader, name="logparse-reader", daemon=True)
    t.start()
    try:
        while True:
            item = q.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        t.join(timeout=1)


class BulkReader:
    """The fast stage over one source: its :meth:`items` are the records of the lines the grammar
    reads and, between them, what the blocks decoded in bulk (:mod:`logparse.grammar.fast`)."""

    def __init__(self, src, block_bytes: int | None = None, stamps: bool = False) -> None:
        self.src = src
        self.block_bytes = max(block_bytes or block_bytes_for(src.fmt), 1)
        self.fmt = src.fmt
        self.parser = src.line_parser()
        self.pid_key: dict[Any, tuple] = {}
        # lines are numbered from 1: the parse loop shifts a window's records (watch) itself
        self.line_no = 0
        self.last_python_row = -2
        #: keep the stamp of each batch line (:class:`~logparse.grammar.fast.RuntimeSlice`)
        self.stamps = stamps
        self._samples: dict = {}

    # ------------------------------------------------------------------ reading
    def _blocks(self, chunks):
        """The input cut into blocks of whole lines (without the final newline)."""
        return line_blocks(chunks, self.block_bytes)

    def items(self, workers: int | None = None) -> Iterator[Any]:
        """Classify blocks (in worker processes for large inputs); their items, in input order."""
        if workers is None:
            workers = _workers_for(getattr(self.src, "size", None) or 0, self.block_bytes, self.fmt)
        with self.src.open_content() as content:
            if self.fmt == "journal-export":
                blocks = bulk_export.segments(content.chunks, self.block_bytes)
            else:
                blocks = self._blocks(content.chunks)
            if workers <= 1:
                # closed right away on any exit (Ctrl-C too), not when the generator is collected
                with closing(_prefetch(blocks)) as prefetched:
                    yield from self._threads(prefetched, content.crlf)
            else:
                yield from self._parallel(blocks, workers, content.crlf)
            yield from self._records(self.parser.finish())
            content.end()

    def _threads(self, blocks, crlf: bool) -> Iterator[Any]:
        """Classify two blocks at a time in threads, their items in order.

        numpy (:mod:`.bulk_template`) runs one thread per block and releases the GIL in its loops,
        as polars does: two blocks in flight keep both cores busy.  Raw export entries are read by
        the record path in this thread, in their place."""
        from collections import deque
        from concurrent.futures import ThreadPoolExecutor

        threads = _threads()
        if threads <= 1:
            for item in blocks:
                yield from self._item(item, crlf)
            return
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="logparse-classify") as pool:
            inflight: deque = deque()
            for item in blocks:
                if item.__class__ is bulk_export.Raw:
                    inflight.append((item, None))
                else:
                    data = item.data if item.__class__ is bulk_export.Clean else item
                    inflight.append(
                        (item, pool.submit(classify_block, data, self.fmt, crlf, self.stamps) if data else None)
                    )
                while len(inflight) > threads:
                    yield from self._done(*inflight.popleft())
            while inflight:
                yield from self._done(*inflight.popleft())

    def _done(self, item, future) -> Iterator[Any]:
        if item.__class__ is bulk_export.Raw:
            yield from self._raw_entries(item.data)
        elif future is not None:
            yield from self._block(future.result())

    def _item(self, item, crlf: bool) -> Iterator[Any]:
        if item.__class__ is bulk_export.Raw:
            yield from self._raw_entries(item.data)
        elif item.__class__ is bulk_export.Clean:
            if item.data:
                yield from self._block(classify_block(item.data, self.fmt, crlf, self.stamps))
        else:
            yield from self._block(classify_block(item, self.fmt, crlf, self.stamps))

    def _parallel(self, blocks, workers: int, crlf: bool) -> Iterator[Any]:
        import multiprocessing
        from collections import deque
        from concurrent.futures import ProcessPoolExecutor

        # spawn, not fork: polars' thread pool does not survive a fork.
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            inflight: deque = deque()
            for data in blocks:
                if data.__class__ is bulk_export.Raw:
                    while inflight:
                        yield from self._block(inflight.popleft().result())
                    yield from self._raw_entries(data.data)
                    continue
                if data.__class__ is bulk_export.Clean:
                    data = data.data
                inflight.append(pool.submit(classify_block, data, self.fmt, crlf, self.stamps))
                while len(inflight) > workers + 1:  # bounded memory: a few blocks in flight
                    yield from self._block(inflight.popleft().result())
            while inflight:
                yield from self._block(inflight.popleft().result())

    def _block(self, res: BlockResult) -> Iterator[Any]:
        first = self.line_no + 1
        self.line_no += res.n
        yield Counted(res.vec_total, res.vec_parsed, set(res.sglang_pids))
        self._samples = res.samples
        aggs = res.aggs
        yield from self._runtime(aggs.get(-1))  # batch rows before the first python row of this block
        line_rows = res.py_rows if res.py_line_rows is None else res.py_line_rows
        entries = res.py_line_rows is not None
        cursors = iter(res.cursors)
        pending = next(cursors, None)
        for k, (row, line_row, line) in enumerate(zip(res.py_rows, line_rows, res.py_lines)):
            while pending is not None and pending[0] < row:  # streams' cursors, in entry order
                self.src.last_cursor[pending[1]] = pending[2]
                pending = next(cursors, None)
            if row != self.last_python_row + 1:
                yield from self._gap()
            self.last_python_row = row
            if entries:
                yield from self._python_entries(first + line_row, line)
            else:
                yield from self._python_line(first + line_row, line)
            yield from self._runtime(aggs.get(k))
        while pending is not None:
            self.src.last_cursor[pending[1]] = pending[2]
            pending = next(cursors, None)
        self.last_python_row -= res.n if res.rows is None else res.rows  # the next block's rows start at 0

    def _raw_entries(self, data: bytes) -> Iterator[Any]:
        """Entries the record path reads as they are (a binary field): python rows of their own."""
        if self.last_python_row != -1:
            yield from self._gap()
        yield from self._python_entries(self.line_no + 1, data)
        self.line_no += data.count(b"\n")
        self.last_python_row = -1

    def _python_entries(self, n: int, data: bytes) -> Iterator[Any]:
        reader = ExportReader(self.parser, (data,))
        reader.line_no = n
        for r in reader.records(finish=False):
            yield from self._records(r if isinstance(r, list) else (r,))

    # ------------------------------------------------------------------ the items
    def _gap(self) -> Iterator[Any]:
        """Lines were handled in bulk since the last python line: they were well-formed SGLang
        lines, which end any multi-line record (traceback, warning, journal continuation)."""
        self.parser.end_continuation()
        yield GAP

    def _python_line(self, n: int, line: str | bytes) -> Iterator[Any]:
        raw = line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")
        r = self.parser.parse(n, raw)
        if r is not None:
            yield from self._records(r if isinstance(r, list) else (r,))

    def _records(self, recs) -> Iterator[Any]:
        for rec in recs:
            if rec.ts.__class__ is tuple:  # year-less stamp (not a bulk format); drop the outer time
                rec.ts = None
            if rec.pid is not None or rec.host is not None:
                self.pid_key[rec.pid] = rec.stream_key()
            yield rec

    def _sample_key(self, pid) -> tuple:
        """The stream of a pid whose batch lines came before any python row of it (a window that
        starts mid-run): its record's, read from one of its lines by a parser of its own."""
        sample = self._samples.get(pid)
        if pid is None or sample is None:
            return (None, None, None, pid)
        parser = LineParser(_QuietSink(self.src.name), self.fmt)
        if sample.__class__ is bytes:
            recs = [r for rs in ExportReader(parser, (sample,)).records(finish=False) for r in _listed(rs)]
        else:
            recs = _listed(parser.parse(1, sample.encode("utf-8", "surrogatepass")))
        return recs[0].stream_key() if recs else (None, None, None, pid)

    def _runtime(self, items) -> Iterator[Any]:
        if not items:
            return
        for pid, agg in items:
            key = self.pid_key.get(pid)
            if key is None:
                key = self.pid_key[pid] = self._sample_key(pid)
            stamps = agg.pop("stamps", None)
            yield RuntimeSlice(key, agg, "sglang", stamps)


def _listed(r) -> list:
    return [] if r is None else r if isinstance(r, list) else [r]


class _QuietSink:
    """Where a parser that only reads a line's stream reports (nothing of it is kept)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.last_cursor: dict = {}

    def note_problem(self, kind: str, n: int = 1) -> None:
        return None

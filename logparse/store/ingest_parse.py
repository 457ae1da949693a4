"""The parse of one input for the store, before any write lock is taken.

:func:`parse_source` runs an input through a :class:`logparse.pipeline.StreamParser` that also
counts each launch's batch lines per stamp (the store merges overlapping pieces with them): large
files and streams on an engine's vectorized path (:data:`BULK_MIN_BYTES`), the others record by
record, with a progress bar (:mod:`.ingest_progress`).  It notes the journal cursors it reads and
turns the launches, and the pieces of launches that began before the input, into the items
(:class:`~logparse.store.items.Item`) that :mod:`logparse.store.merge` writes: a
:class:`ParsedSource`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logparse.launches.identity import launch_id, make_distinct
from logparse.launches.model import Launch
from logparse.store import runtime as rtm
from logparse.store.ingest_progress import ProgressBar
from logparse.store.ingest_types import IngestOptions
from logparse.store.items import Item, is_continuation
from logparse.store.runtime import BatchSpan

#: Files at least this large take the vectorized path (batch lines known by their aggregate only);
#: smaller inputs, and every journal query, are read record by record.
BULK_MIN_BYTES = 4 << 20


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
    #: the launches the store refused, one note each (:func:`logparse.store.ingest.set_aside_refused`)
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
    progress = ProgressBar(src, opts.progress, sp)
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


def _stream_with_host(stream: tuple, host: str | None) -> tuple:
    if host and not stream[0]:
        return (host,) + tuple(stream[1:])
    return tuple(stream)


def _relabel(launch: Launch, host: str | None) -> None:
    """Give a launch without a host the ``--host`` one (and the id that goes with it)."""
    if host and not launch.host:
        launch.host = host
        launch.launch_id = launch_id(launch)

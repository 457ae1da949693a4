"""The parse of one input for the store, before any write lock is taken.

:func:`parse_source` reads an input through the parse loop (:func:`logparse.pipeline.parse`, which
says which inputs take the fast stage) with the store's hooks (:class:`StoreHooks`: each launch's
batch lines per stamp, with which the store merges overlapping pieces, and the journal cursors), with
a progress bar (:mod:`.ingest_progress`).  It turns the launches, and the pieces of launches that
began before the input, into the items (:class:`~logparse.store.items.Item`) that :mod:`logparse.store.merge` writes: a
:class:`ParsedSource`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logparse.launches.identity import launch_id, make_distinct
from logparse.launches.model import Launch
from logparse.pipeline import ParseHooks, SourceParse, parse
from logparse.store import runtime as rtm
from logparse.store.ingest_progress import ProgressBar
from logparse.store.ingest_types import IngestOptions
from logparse.store.items import Item, is_continuation
from logparse.store.runtime import BatchSpan


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


class StoreHooks(ParseHooks):
    """What the store hears of a parse (:func:`logparse.pipeline.parse`): each record's journal
    cursor, and the batch lines of each launch per stamp (:mod:`logparse.store.runtime` merges
    overlapping pieces of a stream with them: a stream's fast stage keeps the stamp of each line)."""

    def __init__(self, kind: str, host: str | None, progress: ProgressBar | None = None) -> None:
        self.stamps = kind != "file"
        self.host = host
        self.progress = progress
        self.cursors: dict[tuple, str] = {}
        self.cursor_by_line: dict[int, str] = {}
        #: per launch (its assembler), the batch lines the grammar read per stamp, and the stamps'
        #: frames the fast stage decoded
        self.batch_counts: dict[Any, Counter] = {}
        self.batch_frames: dict[Any, list] = {}

    def source(self, src: Any, parser: Any) -> None:
        if self.progress is not None:
            self.progress.sp = parser

    def record(self, rec: Any) -> None:
        if rec.cursor:
            self.cursors[(rec.host or self.host, rec.unit)] = rec.cursor
            self.cursor_by_line[rec.line_no] = rec.cursor

    def batch(self, asm: Any, ev: Any) -> None:
        counts = self.batch_counts.get(asm)
        if counts is None:
            counts = self.batch_counts[asm] = Counter()
        counts[ev.ts] += 1

    def batch_stamps(self, asm: Any, stamps: Any) -> None:
        self.batch_frames.setdefault(asm, []).append(stamps)

    def stamps_of(self, asm: Any) -> Any:
        """The batch lines per stamp of a launch (either path)."""
        return rtm.stamp_counts(self.batch_counts.get(asm), self.batch_frames.get(asm))


def parse_source(
    src, opts: IngestOptions, *, kind: str | None = None, first_line: int = 1, ordinal_base: int = 0
) -> ParsedSource:
    """One input read for the store (``kind``: what :func:`source_kind` would say, unless the caller
    knows better; ``first_line``, ``ordinal_base``: a window of a longer input, as watch reads it,
    see :func:`logparse.pipeline.parse`)."""
    kind = kind or source_kind(src)
    progress = ProgressBar(src, opts.progress)
    hooks = StoreHooks(kind, opts.host, progress)
    try:
        one = parse(src, hooks, sglang_version=opts.sglang_version, first_line=first_line, ordinal_base=ordinal_base)
    finally:
        progress.close()
    if kind != "file":  # the last entry of each unit, the fast stage's lines too
        for (host, unit), cursor in getattr(src, "last_cursor", {}).items():
            hooks.cursors[(host or opts.host, unit)] = cursor
    items = _launch_items(one, hooks, opts.host)
    orphans, orphan_lines = _orphan_items(one, hooks, opts.host)
    return ParsedSource(
        name=src.name,
        kind=kind,
        fmt=getattr(src, "fmt", "plain"),
        content_hash=getattr(src, "content_hash", None),
        bytes=getattr(src, "bytes_read", None),
        counts=one.counts,
        items=items + orphans,
        unrecognized=one.unrecognized,
        warnings=[w for w in one.warnings if "started before this input begins" not in w],
        cursors=hooks.cursors,
        cursor_by_line=hooks.cursor_by_line,
        orphan_lines=orphan_lines,
        skipped=getattr(src, "skipped", None),
    )


def _launch_items(one: SourceParse, hooks: StoreHooks, host: str | None) -> list[Item]:
    """One item per assembled launch (relabelled with ``--host``)."""
    launches: list[Launch] = one.launches
    asms = one.assemblers
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
                span=BatchSpan.from_runtime(launch.runtime, None, hooks.stamps_of(asm)),
            )
        )
    return items


def _orphan_items(one: SourceParse, hooks: StoreHooks, host: str | None) -> tuple[list[Item], int]:
    """One item per piece of a launch that began before the input (a continuation), and their line count."""
    items: list[Item] = []
    orphan_lines = 0
    for asm in one.orphans:
        agg = asm.runtime.to_dict() if hasattr(asm, "runtime") else {}
        orphan_lines += len(asm.events) + int(agg.get("batch_lines") or 0)
        items.append(
            Item(
                events=list(asm.events),
                stream=_stream_with_host(tuple(asm.stream), host),
                continuation=True,
                span=BatchSpan.from_runtime(agg, None, hooks.stamps_of(asm)),
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

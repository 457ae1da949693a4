"""The parse of one input for the store, before any write lock is taken.

:func:`parse_source` reads an input through the parse loop (:func:`logparse.pipeline.parse`, which
says which inputs take the fast stage) with the store's hooks (:class:`StoreHooks`: each launch's
batch lines per stamp, with which the store merges overlapping pieces, and the journal cursors), with
a progress bar (:mod:`.ingest_progress`).  Each launch becomes an item
(:class:`~logparse.store.items.Item`, what :mod:`logparse.store.merge` writes) as soon as the parse
hands it out, and the pieces of launches that began before the input at its end: the input's items,
in batches that wait in a temporary file (:class:`~logparse.store.items.ItemBatches`), make a
:class:`ParsedSource`.  So what a parse holds does not grow with the input's launches.
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
from logparse.store.items import Item, ItemBatches, is_continuation
from logparse.store.runtime import BatchSpan


@dataclass
class ParsedSource:
    name: str
    kind: str
    fmt: str
    content_hash: str | None
    bytes: int | None
    counts: Any
    items: ItemBatches
    unrecognized: list
    warnings: list[str]
    cursors: dict[tuple, str]  # (host, unit) -> last __CURSOR
    orphan_lines: int = 0
    #: why the input was not read (a binary file met in a directory walk)
    skipped: str | None = None
    #: the launches the store refused, one note each (:func:`logparse.store.ingest.set_aside_refused`)
    set_aside: list[str] = field(default_factory=list)

    def close(self) -> None:
        """Forget the items (the temporary file of their batches)."""
        self.items.close()


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
    """What the store hears of a parse (:func:`logparse.pipeline.parse`): the journal cursor of each
    line that is an event, the batch lines of each launch per stamp (:mod:`logparse.store.runtime`
    merges overlapping pieces of a stream with them: a stream's fast stage keeps the stamp of each
    line), and each launch as soon as it is final, made an item at once (``items``).  What it keeps
    of a launch (by its assembler's ``order``, unique in the parse) goes with it."""

    takes_launches = True

    def __init__(self, kind: str, host: str | None, progress: ProgressBar | None = None) -> None:
        self.stamps = kind != "file"
        self.host = host
        self.progress = progress
        self.cursors: dict[tuple, str] = {}
        #: the cursor of the record being read, and of each line that is an event not yet in an item
        self._cursor: str | None = None
        self.cursor_by_line: dict[int, str] = {}
        #: per launch (its assembler's order), the batch lines the grammar read per stamp, and the
        #: stamps' frames the fast stage decoded
        self.batch_counts: dict[int, Counter] = {}
        self.batch_frames: dict[int, list] = {}
        self.items = ItemBatches()
        self._ids: set[str] = set()

    def source(self, src: Any, parser: Any) -> None:
        if self.progress is not None:
            self.progress.sp = parser

    def record(self, rec: Any) -> None:
        self._cursor = rec.cursor
        if rec.cursor:
            self.cursors[(rec.host or self.host, rec.unit)] = rec.cursor

    def event(self, ev: Any) -> None:
        if self._cursor:
            self.cursor_by_line[ev.line_no] = self._cursor

    def batch(self, asm: Any, ev: Any) -> None:
        counts = self.batch_counts.get(asm.order)
        if counts is None:
            counts = self.batch_counts[asm.order] = Counter()
        counts[ev.ts] += 1

    def batch_stamps(self, asm: Any, stamps: Any) -> None:
        self.batch_frames.setdefault(asm.order, []).append(stamps)

    def take_stamps(self, asm: Any) -> Any:
        """The batch lines per stamp of a launch (either path), forgotten here."""
        order: int = getattr(asm, "order", 0)
        return rtm.stamp_counts(self.batch_counts.pop(order, None), self.batch_frames.pop(order, None))

    def take_cursors(self, events: list) -> dict[int, str]:
        """The cursors of these events' lines, forgotten here."""
        if not self.cursor_by_line:
            return {}
        found = ((ev.line_no, self.cursor_by_line.pop(ev.line_no, None)) for ev in events)
        return {no: cursor for no, cursor in found if cursor}

    def launch(self, launch: Launch, asm: Any) -> None:
        """A launch of the input, relabelled with ``--host`` (its id distinct from those before it)."""
        _relabel(launch, self.host)
        make_distinct([launch], self._ids)
        self.items.add(
            Item(
                events=list(launch.events),
                stream=_stream_with_host((launch.host, launch.unit, launch.boot, launch.pid), self.host),
                launch=launch,
                continuation=is_continuation(launch.events),
                span=BatchSpan.from_runtime(launch.runtime, None, self.take_stamps(asm)),
                cursors=self.take_cursors(launch.events),
            )
        )

    def orphans(self, one: SourceParse) -> int:
        """One item per piece of a launch that began before the input (a continuation); their lines."""
        orphan_lines = 0
        for asm in one.orphans:
            agg = asm.runtime.to_dict() if hasattr(asm, "runtime") else {}
            orphan_lines += len(asm.events) + int(agg.get("batch_lines") or 0)
            self.items.add(
                Item(
                    events=list(asm.events),
                    stream=_stream_with_host(tuple(asm.stream), self.host),
                    continuation=True,
                    span=BatchSpan.from_runtime(agg, None, self.take_stamps(asm)),
                    cursors=self.take_cursors(asm.events),
                )
            )
        return orphan_lines


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
        orphan_lines = hooks.orphans(one)
    except BaseException:
        hooks.items.close()
        raise
    finally:
        progress.close()
    if kind != "file":  # the last entry of each unit, the fast stage's lines too
        for (host, unit), cursor in getattr(src, "last_cursor", {}).items():
            hooks.cursors[(host or opts.host, unit)] = cursor
    return ParsedSource(
        name=src.name,
        kind=kind,
        fmt=getattr(src, "fmt", "plain"),
        content_hash=getattr(src, "content_hash", None),
        bytes=getattr(src, "bytes_read", None),
        counts=one.counts,
        items=hooks.items,
        unrecognized=one.unrecognized,
        warnings=[w for w in one.warnings if "started before this input begins" not in w],
        cursors=hooks.cursors,
        orphan_lines=orphan_lines,
        skipped=getattr(src, "skipped", None),
    )


def _stream_with_host(stream: tuple, host: str | None) -> tuple:
    if host and not stream[0]:
        return (host,) + tuple(stream[1:])
    return tuple(stream)


def _relabel(launch: Launch, host: str | None) -> None:
    """Give a launch without a host the ``--host`` one (and the id that goes with it)."""
    if host and not launch.host:
        launch.host = host
        launch.launch_id = launch_id(launch)

"""The parse pipeline: sources -> records -> classified lines -> events -> launches.

:func:`parse` is the one loop over an input's records: ``parse``, ``ingest`` and ``watch`` all read
through it, and say what they need besides the launches through :class:`ParseHooks` (the store: each
record's journal cursor, the stamps of each launch's batch lines; watch: where its window begins).

Library entry points (the CLI is a thin layer over these):

* :func:`parse_paths` -- files, directories, ``-``;
* :func:`parse_sources` -- any :class:`logparse.sources.Source` objects (journal, text);
* :func:`parse_text` -- a string (tests, notebooks).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from logparse import engines
from logparse.engines.base import Assembler, Assembly, Claim
from logparse.grammar.bounds import bound_fields
from logparse.grammar.classify import LineClassifier
from logparse.grammar.events import Event
from logparse.grammar.fast import Counted, Gap, RuntimeSlice
from logparse.grammar.kinds import GENERIC_KINDS
from logparse.grammar.units import Units
from logparse.launches.identity import make_distinct
from logparse.launches.model import LineCounts, ParseResult, SourceSummary, Unrecognized
from logparse.launches.times import iso_utc, utc_offset
from logparse.sources.records import Record
from logparse.sources.redact import redact
from logparse.sources.timestamps import NOTE_BAD_TIME, bad_time_note, iso_stamp_ok, record_time_is_instant
from logparse.spill import SpilledDict

#: Unrecognized lines kept in the result per source (the counts are always exact).
MAX_UNRECOGNIZED_KEPT = 10_000
#: Text kept of one unrecognized line.
MAX_UNRECOGNIZED_TEXT = 4_000
#: Record notes that change how figures should be read: said once per source, with a count.
_SURFACED_NOTES = ("year from", "unit from", "Docker Desktop local time", "time from the Python logging", "month name")


#: The stream key of a line no outer layer says anything about.
_NO_STREAM = (None, None, None, None)

#: Lines of an engine held back per stream until a launch of it opens there.
_MAX_HELD = 1000


class ParseHooks:
    """What a caller of :func:`parse` hears besides the launches (each a no-op here).

    ``stamps``: the fast stage keeps the stamp of each batch line it decodes (:meth:`batch_stamps`),
    which the store needs to merge overlapping windows of a stream exactly.  ``takes_launches``: the
    hooks take each launch as soon as it is final (:meth:`launch`), so the parse holds none of them
    (:data:`RESIDENT_LAUNCHES`); else the parse collects them (:attr:`SourceParse.launches`)."""

    stamps: bool = False
    takes_launches: bool = False

    def source(self, src: Any, parser: StreamParser) -> None:
        """The parse of ``src`` begins (progress: the source counts its bytes, the parser its lines)."""

    def record(self, rec: Record) -> None:
        """A record reaches the grammar (the store notes its journal cursor)."""

    def event(self, ev: Event) -> None:
        """The record last given to :meth:`record` is an event that joined a launch or waits for one
        (a batch line is told to :meth:`batch` instead)."""

    def launch(self, launch: Any, asm: Assembler) -> None:
        """A launch is final (with ``takes_launches``), in the order of the input's launches: every
        launch that began before it was handed out before it, with its ordinal and distinct id."""

    def batch(self, asm: Assembler, ev: Event) -> None:
        """A batch line the grammar read joined the launch ``asm``."""

    def batch_stamps(self, asm: Assembler, stamps: Any) -> None:
        """The fast stage decoded batch lines of the launch ``asm`` (``stamps``: their stamps)."""


#: Launches (open or closed, not yet handed out) a parse whose hooks take them keeps in memory; the
#: others wait in a temporary file (:class:`logparse.spill.SpilledDict`) until a line of theirs
#: comes, or their turn to be handed out (a journal's launches are each on a stream of their own,
#: open to the input's end).
RESIDENT_LAUNCHES = 64

#: Inputs at least this large (and streams whose size is not known) take an engine's fast stage;
#: below it the record path is faster (it imports neither polars nor numpy).
FAST_MIN_BYTES = 2 << 20


class _Assemblies(dict):
    """Engine name -> its :class:`Assembly`, each made on first use (an input of one engine does not
    import the other engines' assembly modules)."""

    def __missing__(self, name: str) -> Assembly:
        self[name] = assembly = engines.get(name).assembly()
        return assembly


class StreamParser:
    """Parses the records of one source; keeps per-stream state (classifier, open launches).

    No engine is named here: each line's engine is the one whose grammar read it
    (:class:`~logparse.engines.base.Claim`), a line any program prints (a traceback) goes to the engine
    the stream printed last, and each engine's :class:`~logparse.engines.base.Assembly` says how its
    events become launches."""

    def __init__(self, source_name: str, sglang_version: str | None = None, hooks: ParseHooks | None = None) -> None:
        self.source_name = source_name
        self.hooks = hooks or ParseHooks()
        #: the release the user says the logs are of (``--sglang-version``), for the engine that takes one
        self.sglang_version = sglang_version
        self.counts = LineCounts()
        self.unrecognized: list[Unrecognized] = []
        self.warnings: list[str] = []
        self._classifiers: dict[tuple, LineClassifier] = {}
        #: each engine's assembly (how its events become launches), by name: made when a line of the
        #: engine first needs it (an engine without one has no open launch and holds no line)
        self._assembly: dict[str, Assembly] = _Assemblies()
        self._default = engines.default().name
        #: every assembler not yet handed out, open or closed, by its order (the oldest in a file
        #: when the hooks take the launches); the order of the one open per (engine, stream)
        self._asms: SpilledDict[int, Assembler] = SpilledDict(RESIDENT_LAUNCHES if self.hooks.takes_launches else None)
        self._open: dict[tuple[str, tuple], int] = {}
        self._open_orders: list[int] = []  # a heap of the open ones' orders (and of some closed since)
        self._still_open: set[int] = set()
        self._closed: list[int] = []  # a heap of the closed ones' orders, until no open one precedes them
        self._order = 0
        #: closed assemblers that are no launch, in order: kept or not at the end (``_other_units``)
        self._pieces: list[Assembler] = []
        #: launches handed out so far, and their ids (each made distinct from those before it)
        self._n_launches = 0
        self._seen_ids: set[str] = set()
        #: the launches, when the hooks do not take them
        self.launches: list = []
        self._orphan_lines = 0
        #: notes of the outer layer worth telling the user once per source (year inference, ...)
        self._notes: dict[str, int] = {}
        #: Runtime-only fragments (assemblers with ``.stream`` and ``.events``) of a launch that
        #: started before this input begins: not launches here, kept for the store to attach.
        self.orphans: list[Assembler] = []
        #: the assembler of each launch, in the order of the launches (when the hooks do not take them)
        self.assemblers: list[Assembler] = []
        #: lines per unit of a journal or capture (other programs' lines are counted apart)
        self._units = Units(self._default)
        #: the unit of each kept unrecognized line (None: no unit)
        self._unrecognized_units: list[tuple | None] = []
        #: the stream of the last record fed
        self._last_key: tuple | None = None
        #: the engine each stream printed last, and each engine's lines held back per stream until a
        #: launch of it opens there (:meth:`Assembly.holds`)
        self._engine_of: dict[tuple, str] = {}
        self._held: dict[tuple[str, tuple], list[Event]] = {}
        #: the input's modification time: the year of a year-less stamp when no outer layer dates a line
        self.mtime: float | None = None
        #: launches of the source before this input begins (a window of a growing file): the
        #: ordinals go on from there, as in a parse of the whole file
        self.ordinal_base = 0
        #: lines read without their time (it named none: month 13, Feb 30, hour 25), the first one
        self._bad_times = 0
        self._first_bad_time: tuple[int, str] | None = None

    def _read_notes(self, rec: Record) -> None:
        for note in rec.notes:
            if note.startswith(_SURFACED_NOTES):
                self._notes[note] = self._notes.get(note, 0) + 1
            elif note.startswith(NOTE_BAD_TIME):
                self._bad_time(rec.line_no, note)

    def _bad_time(self, line_no: int, note: str) -> None:
        """Count a line read without its time (it named no real time); the first one is shown."""
        if not self._bad_times:
            self._first_bad_time = (line_no, note)
        self._bad_times += 1

    def _checked_stamp(self, ev: Event, line_no: int) -> None:
        """Drop the event's own stamp (SGLang's, vLLM's) when it names no real time: the line
        keeps its figures and takes the outer time, if any (:func:`iso_stamp_ok`)."""
        if ev.ts is not None and not iso_stamp_ok(ev.ts):
            self._bad_time(line_no, bad_time_note(ev.ts.replace("T", " ")))
            ev.ts = None

    def _stream(self, rec: Record) -> tuple:
        key = rec.stream_key()
        if key != self._last_key and key == _NO_STREAM and self._last_key is not None:
            # A line with no outer layer right after a journal line whose wrapped line is open: the
            # rest of it, wrapped by a terminal or a paste (the classifier decides).
            last = self._classifiers.get(self._last_key)
            if last is not None and last.continuing:
                key = self._last_key
        self._last_key = key
        return key

    def feed(self, rec: Record) -> None:
        if rec.text:
            rec.text = redact(rec.text)  # no stage after this one sees a secret (logparse.sources.redact)
        if rec.notes:
            self._read_notes(rec)
        key = self._stream(rec)
        clf = self._classifiers.get(key)
        if clf is None:
            clf = self._classifiers[key] = LineClassifier()
        res = clf.classify(rec)
        self.counts.add(res.status)
        unit = None
        if rec.unit is not None:
            unit = (rec.host, rec.unit)
            self._units.tally(unit, rec, res)
        if res.status == "unrecognized":
            self._keep_unrecognized(rec, res, unit)
        elif res.status == "parsed":
            self._event(key, rec, res)

    def _keep_unrecognized(self, rec: Record, res: Claim, unit: tuple | None) -> None:
        if len(self.unrecognized) < MAX_UNRECOGNIZED_KEPT:
            text = res.text or (rec.text or "")
            self.unrecognized.append(
                Unrecognized(self.source_name, rec.line_no, res.reason, text[:MAX_UNRECOGNIZED_TEXT])
            )
            self._unrecognized_units.append(unit)

    def _event(self, key: tuple, rec: Record, res: Claim) -> None:
        """The event of a parsed line, placed on the launch of its engine open on the stream."""
        parser = res.engine or self._default
        if res.parsed is None:  # the next piece of a wrapped line
            cur = self._open_on((parser, key))
            if cur is not None:
                cur.continue_wrapped(res.text)
            return
        prefix, gpu, (kind, fields, form) = res.parsed
        bound_fields(
            fields, res.text, strings=True
        )  # figures out of their bounds (or text where one belongs): None, noted for the launch's warnings
        ev = Event(kind=kind, fields=fields, form=form, source=self.source_name, line_no=rec.line_no, text=res.text)
        outer = iso_utc(rec.ts)
        ev.record_ts = outer
        engine = parser
        if kind in GENERIC_KINDS and not self._assembly[parser].owns_generic(prefix):
            engine = self._engine_of.get(key) or self._default  # a traceback names no engine
        assembly = self._assembly[engine]
        assembly.place(ev, prefix, gpu, engine == parser, outer, self.mtime)
        self._checked_stamp(ev, rec.line_no)
        assembly.date(ev, outer)
        ev.utc_offset = utc_offset(ev.ts, outer, record_time_is_instant(rec.fmt, rec.notes))
        self._add_event(engine, key, ev)

    def _other_units(self) -> set[tuple]:
        """Units none of whose lines is an engine's (:mod:`logparse.grammar.units`): their lines are
        counted as ``other_units``, their unrecognized lines are not kept."""
        ours, others = self._units.others(self.counts)
        if not others:
            return set()
        kept = [(u, w) for u, w in zip(self.unrecognized, self._unrecognized_units) if w not in others]
        self.unrecognized = [u for u, _ in kept]
        self._unrecognized_units = [w for _, w in kept]
        self.warnings.append(self._units.warning(self.source_name, ours, others))
        return set(others)

    def take(self, item: Counted | Gap | RuntimeSlice) -> None:
        """What the fast stage yields besides records (:mod:`logparse.grammar.fast`)."""
        if isinstance(item, RuntimeSlice):
            self._runtime(item)
        elif isinstance(item, Counted):
            counts = self.counts
            counts.total += item.total
            counts.parsed += item.parsed
            counts.noise += item.total - item.parsed
            self._units.engine_pids.update(item.pids)
        else:  # a gap: well-formed engine lines end any multi-line record (traceback, warning) open
            for clf in self._classifiers.values():
                clf.end_multiline()

    def _runtime(self, item: RuntimeSlice) -> None:
        """A runtime aggregate of the fast stage joins its engine's launch open on its stream."""
        cur = self._open_on((item.engine, item.key))
        if cur is None:
            cur = self._new(item.engine, item.key)
        cur.merge_runtime(item.aggregate)
        if item.stamps is not None:
            self.hooks.batch_stamps(cur, item.stamps)

    def _add_event(self, engine: str, key: tuple, ev: Event) -> None:
        """An event joins its engine's launch open on its stream; an event that can open one opens it
        (with the lines held back before it); one that cannot is held back, if the engine holds it."""
        assembly, slot = self._assembly[engine], (engine, key)
        cur = self._open_on(slot)
        if cur is None:
            if not assembly.opens(ev):
                held = self._held.setdefault(slot, [])
                if assembly.holds(ev) and len(held) < _MAX_HELD:
                    held.append(ev)
                    self.hooks.event(ev)
                return
            cur = self._new(engine, key, self._generic_head(engine, key, ev))
        elif cur.starts_new_launch(ev):
            self._close(slot)
            cur = self._new(engine, key)
        if assembly.marks_stream(ev):
            self._engine_of[key] = engine
            for other in self._assembly:
                if other != engine:
                    self._held.pop((other, key), None)
        cur.add(ev)
        if assembly.is_batch(ev):
            self.hooks.batch(cur, ev)
        else:
            self.hooks.event(ev)

    def _generic_head(self, engine: str, key: tuple, ev: Event) -> list[Event]:
        """The generic lines (a traceback, uvicorn's) a stream printed before its first line of this
        engine, when that line is one no launch begins with (a KV figure, a startup failure) and the
        engine says so (:meth:`Assembly.adopts_head`): the input begins inside the launch, and those
        lines are that launch's, as in a parse of the whole log (where the stream is known to be the
        engine's by then).  Before a line a launch can begin with, they stay a piece of the launch
        before it."""
        if not self._assembly[engine].adopts_head(ev):
            return []
        for other in self._assembly:
            head = self._open_on((other, key))
            if other != engine and head is not None and head.only_generic():
                order = self._open.pop((other, key))
                self._still_open.discard(order)
                self._asms.pop(order)
                return list(head.events)
        return []

    def _open_on(self, slot: tuple[str, tuple]) -> Assembler | None:
        """The assembler open on a stream for an engine (read back if it waited in the spill)."""
        order = self._open.get(slot)
        return None if order is None else self._asms.get(order)

    def _new(self, engine: str, key: tuple, head: list[Event] | None = None) -> Assembler:
        cur = self._assembly[engine].new(self.source_name, key)
        self._order += 1
        cur.order = self._order
        self._open[(engine, key)] = cur.order
        self._still_open.add(cur.order)
        heapq.heappush(self._open_orders, cur.order)
        for held in sorted([*(head or []), *self._held.pop((engine, key), [])], key=lambda e: e.line_no):
            cur.add(held)
        self._asms[cur.order] = cur
        return cur

    def _close(self, slot: tuple[str, tuple]) -> None:
        order = self._open.pop(slot, None)
        if order is not None:
            self._still_open.discard(order)
            heapq.heappush(self._closed, order)
            self._hand_out()

    def _hand_out(self) -> None:
        """Finish, in order, the closed assemblers that no open one precedes (a launch's ordinal is its
        place among the launches that opened before it: final once none of them is open)."""
        opened = self._open_orders
        while opened and opened[0] not in self._still_open:
            heapq.heappop(opened)
        oldest = opened[0] if opened else None
        while self._closed and (oldest is None or self._closed[0] < oldest):
            asm = self._asms.pop(heapq.heappop(self._closed))
            if asm is not None:
                self._final(asm)

    def _final(self, asm: Assembler) -> None:
        """A closed assembler: its launch, numbered and made distinct, to the hooks or the result
        (a piece that is no launch waits for the end, which says whose it is)."""
        if not asm.is_launch():
            self._pieces.append(asm)
            return
        self._n_launches += 1
        launch = asm.finish(version=self.sglang_version, ordinal=self.ordinal_base + self._n_launches)
        make_distinct([launch], self._seen_ids)
        if self.hooks.takes_launches:
            self.hooks.launch(launch, asm)
        else:
            self.launches.append(launch)
            self.assemblers.append(asm)

    def _held_orphans(self) -> None:
        """Lines held back on a stream on which no launch of their engine opened (a piece of a log that
        begins after the launch's first lines) are a piece of a launch that started before the input,
        like the runtime lines of one: counted and kept with the other lines of that stream before it,
        so the store can join them to their launch."""
        for (engine, key), held in self._held.items():
            if not held:
                continue
            piece = self._assembly[engine].new(self.source_name, key)
            others = [o for o in self.orphans if tuple(o.stream) == tuple(key)]
            self.orphans = [o for o in self.orphans if tuple(o.stream) != tuple(key)]
            for ev in sorted([*held, *(e for o in others for e in o.events)], key=lambda e: e.line_no):
                piece.add(ev)
            self._orphan_lines += len(held)
            self.orphans.append(piece)
        self._held.clear()

    def _keep_pieces(self, others: set[tuple]) -> None:
        for asm in self._pieces:
            if (asm.stream[0], asm.stream[1]) in others:
                continue  # an exception line of another program: counted as other_units
            self._orphan_lines += len(asm.events)
            self.orphans.append(asm)
        self._pieces = []

    def finish(self) -> tuple[list, LineCounts, list[Unrecognized], list[str]]:
        """The input ended: every launch is closed and handed out, then what no launch holds."""
        for order in self._open.values():
            heapq.heappush(self._closed, order)
        self._open.clear()
        self._open_orders.clear()
        self._still_open.clear()
        self._hand_out()
        self._asms.close()
        self._keep_pieces(self._other_units())
        self._held_orphans()
        self._closing_warnings()
        return self.launches, self.counts, self.unrecognized, self.warnings

    def _closing_warnings(self) -> None:
        for note, n in self._notes.items():
            self.warnings.append(f"{self.source_name}: {note} ({n} line{'s' if n != 1 else ''})")
        if self._first_bad_time is not None:
            line_no, note = self._first_bad_time
            n = self._bad_times
            when = note.removeprefix(NOTE_BAD_TIME + " ").removesuffix(", read without it")
            self.warnings.append(
                f"{self.source_name}: {n} line{'s' if n != 1 else ''} with a time that names no real time "
                f"(month 13, Feb 30, hour 25, ...), read without it (first: line {line_no}, {when})"
            )
        if self._orphan_lines:
            self.warnings.append(
                f"{self.source_name}: {self._orphan_lines} runtime line(s) belong to a launch "
                "that started before this input begins; they are counted but not attached"
            )
        if self.counts.unrecognized:
            near = sum(1 for u in self.unrecognized if u.reason.startswith("near miss"))
            msg = f"{self.source_name}: {self.counts.unrecognized} unrecognized line(s)"
            if near:
                msg += f", {near} near miss(es): SGLang may print a format variant logparse does not know"
            self.warnings.append(msg)


@dataclass
class SourceParse:
    """One input read by :func:`parse`: its launches, its lines' counts, what was not recognized, the
    warnings (the source's and the parse's), and each launch's assembler (in the launches' order)
    with the pieces of launches that began before the input (``orphans``)."""

    launches: list
    counts: LineCounts
    unrecognized: list[Unrecognized]
    warnings: list[str]
    assemblers: list[Assembler]
    orphans: list[Assembler]


def takes_fast_stage(src: Any, fast: bool | str = True) -> bool:
    """The one size rule: an input of :data:`FAST_MIN_BYTES` or more, or a stream whose size is not
    known (it may be huge), is read by an engine's fast stage if one reads its format (``fast``:
    False never, ``"force"`` whatever the size)."""
    if not fast:
        return False
    if fast == "force":
        return True
    known = getattr(src, "known_size", None)
    size = known() if callable(known) else getattr(src, "size", None)
    return size is None or size >= FAST_MIN_BYTES


def fast_stage(src: Any, hooks: ParseHooks, **options: Any) -> Any:
    """The items (:mod:`logparse.grammar.fast`, records among them) of the first engine whose fast
    stage reads ``src`` (:meth:`logparse.engines.base.Engine.fast_reader`), or None."""
    for engine in engines.all():
        reader = engine.fast_reader(src, stamps=hooks.stamps, **options)
        if reader is not None:
            return reader.items()
    return None


def parse(
    src: Any,
    hooks: ParseHooks | None = None,
    *,
    sglang_version: str | None = None,
    fast: bool | str = True,
    block_bytes: int | None = None,
    first_line: int = 1,
    ordinal_base: int = 0,
) -> SourceParse:
    """The one loop over an input's records: ``src`` (a :class:`logparse.sources.Source`) through the
    fast stage when it takes one (:func:`takes_fast_stage`), else record by record, into launches.

    ``first_line``/``ordinal_base``: the input is a window of a longer one (watch) whose lines are
    numbered from ``first_line`` and whose launches from ``ordinal_base + 1``, as in a parse of the
    whole."""
    hooks = hooks or ParseHooks()
    sp = StreamParser(src.name, sglang_version, hooks)
    sp.mtime = getattr(src, "mtime", None)
    sp.ordinal_base = ordinal_base
    hooks.source(src, sp)
    shift = first_line - 1
    items = None
    if takes_fast_stage(src, fast):
        items = fast_stage(src, hooks, block_bytes=block_bytes)
    for item in src.records() if items is None else items:
        if isinstance(item, Record):
            item.line_no += shift
            hooks.record(item)
            sp.feed(item)
        else:
            sp.take(item)
    launches, counts, unrec, warns = sp.finish()
    warnings = [*getattr(src, "warnings", []), *warns]
    return SourceParse(launches, counts, unrec, warnings, sp.assemblers, sp.orphans)


def parse_sources(
    sources: Iterable,
    sglang_version: str | None = None,
    on_record: Callable[[Record], None] | None = None,
    bulk: bool | str = True,
    block_bytes: int | None = None,
    on_source: Callable[[Any, StreamParser], None] | None = None,
) -> ParseResult:
    """Parse sources (each through :func:`parse`).  ``bulk`` lets large inputs take an engine's fast
    stage (``"force"``: whatever their size); ``on_record`` (a per-record callback) reads record by
    record; ``on_source(src, parser)`` is told of each source as its parse begins."""
    hooks = _CallbackHooks(on_record, on_source)
    fast = bulk if on_record is None else False
    result = ParseResult()
    for src in sources:
        one = parse(src, hooks, sglang_version=sglang_version, fast=fast, block_bytes=block_bytes)
        result.launches.extend(one.launches)
        result.lines.merge(one.counts)
        result.unrecognized.extend(one.unrecognized)
        result.warnings.extend(one.warnings)
        result.sources.append(
            SourceSummary(
                src.name,
                getattr(src, "fmt", "plain"),
                getattr(src, "bytes_read", None),
                one.counts,
                getattr(src, "content_hash", None),
            )
        )
    return result


class _CallbackHooks(ParseHooks):
    """:func:`parse_sources`'s callbacks as hooks."""

    def __init__(self, on_record: Callable[[Record], None] | None, on_source: Callable | None) -> None:
        self.on_record, self.on_source = on_record, on_source

    def source(self, src: Any, parser: StreamParser) -> None:
        if self.on_source is not None:
            self.on_source(src, parser)

    def record(self, rec: Record) -> None:
        if self.on_record is not None:
            self.on_record(rec)


def parse_paths(
    paths: Sequence[str], input_format: str | None = None, sglang_version: str | None = None
) -> ParseResult:
    from logparse.sources import open_inputs

    return parse_sources(open_inputs(list(paths), input_format=input_format), sglang_version)


def parse_text(text: str | bytes, name: str = "<text>", sglang_version: str | None = None) -> ParseResult:
    from logparse.sources import text_source

    return parse_sources([text_source(name, text)], sglang_version)

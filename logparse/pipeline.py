"""The parse pipeline: sources -> records -> classified lines -> events -> launches.

Library entry points (the CLI is a thin layer over these):

* :func:`parse_paths` -- files, directories, ``-``;
* :func:`parse_sources` -- any :class:`logparse.sources.Source` objects (journal, text);
* :func:`parse_text` -- a string (tests, notebooks).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from logparse.grammar.bounds import bound_fields
from logparse.grammar.classify import LineClassifier
from logparse.grammar.events import Event
from logparse.launches.assemble import SCHEDULER_KINDS, STARTUP_KINDS, LaunchAssembler, apply_prefix
from logparse.launches.identity import make_distinct
from logparse.launches.model import LineCounts, ParseResult, SourceSummary, Unrecognized
from logparse.launches.vllm_assemble import OPENING_KINDS as VLLM_OPENING_KINDS
from logparse.launches.vllm_assemble import VllmLaunchAssembler, apply_vllm_prefix
from logparse.sglang_prefix import PREFIX_RE, STAMP_START_RE
from logparse.sources.records import Record
from logparse.sources.redact import redact
from logparse.sources.timestamps import NOTE_BAD_TIME, bad_time_note, iso_stamp_ok, record_time_is_instant

#: Unrecognized lines kept in the result per source (the counts are always exact).
MAX_UNRECOGNIZED_KEPT = 10_000
#: Text kept of one unrecognized line.
MAX_UNRECOGNIZED_TEXT = 4_000
#: Record notes that change how figures should be read: said once per source, with a count.
_SURFACED_NOTES = ("year from", "unit from", "Docker Desktop local time", "time from the Python logging", "month name")


#: Parsed kinds any Python program may print (an exception line, uvicorn's own lines, ``Killed``):
#: not evidence that a unit is SGLang's.
_GENERIC_KINDS = frozenset({"uvicorn", "exception", "exception_start", "killed"})


class _UnitTally:
    """The lines of one unit (host, unit) of a journal or capture, until it is known to be SGLang's."""

    __slots__ = ("noise", "parsed", "pids", "sglang", "unrecognized")

    def __init__(self) -> None:
        self.parsed = self.noise = self.unrecognized = 0
        self.sglang = False
        self.pids: set[int] = set()


#: The stream key of a line no outer layer says anything about.
_NO_STREAM = (None, None, None, None)


def _sglang_line(text: str | None) -> bool:
    """The line carries SGLang's prefix (perhaps after text glued in front)."""
    if not text:
        return False
    m = STAMP_START_RE.search(text)
    return m is not None and PREFIX_RE.match(text, m.start()) is not None


#: vLLM lines a launch can begin with (its API server's head, an engine's init): generic lines
#: printed before one are not its lines.
_VLLM_BEGIN_KINDS = frozenset({"vllm_version", "vllm_args", "vllm_engine_init", "vllm_engine_process"})

#: vLLM lines held back per stream until a vLLM engine anchor shows.
_MAX_HELD_VLLM = 1000


def _is_vllm_event(prefix: dict, kind: str, stream_engine: str | None) -> bool:
    """Does the event go to the stream's vLLM launch?  vLLM's own lines do; a generic line (an exception,
    uvicorn) goes to the engine the stream printed last, also one that only torch's ``[rankN]:`` prefixes
    (any torch program's ranks print it: SGLang's too)."""
    vllm_layers = prefix.get("engine") == "vllm" and bool(prefix.get("procs") or prefix.get("stamp"))
    if kind in _GENERIC_KINDS and not vllm_layers:
        return stream_engine == "vllm"
    return prefix.get("engine") == "vllm"


def _vllm_time(ts: str | None, outer: str | None, mtime: float | None) -> str | None:
    """vLLM's ``MM-DDTHH:MM:SS`` (NIM's ``.mmm`` after it) with its year, as journald's short stamps get theirs: from the
    record's own time (the year around it), else the input's modification time (else today): a
    month and day after that date belong to the year before."""
    import time

    if ts is None or len(ts) not in (14, 18) or ts[2] != "-":  # 18: NIM's milliseconds
        return outer if ts is None else ts
    month, day = int(ts[:2]), int(ts[3:5])
    if outer:
        year, ref_month = int(outer[:4]), int(outer[5:7])
        year += 1 if month == 1 and ref_month == 12 else -1 if month == 12 and ref_month == 1 else 0
    else:
        ref = time.localtime(mtime) if mtime is not None else time.localtime()
        year = ref.tm_year - (1 if (month, day) > (ref.tm_mon, ref.tm_mday) else 0)
    return f"{year:04d}-{ts}"


def _iso_utc(ts: float | tuple[int, int, int] | None) -> str | None:
    if not isinstance(ts, (int, float)):  # none, or a year-less stamp the sources could not date
        return None
    try:
        return datetime.fromtimestamp(ts, tz=UTC).replace(tzinfo=None).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError, TypeError):
        return None


#: How far a line's own stamp may lag its record time and still be read as the same moment (s).
_STAMP_LAG_S = 120


def utc_offset(ts: str | None, outer: str | None, instant: bool) -> int | None:
    """Minutes east of UTC of the event time ``ts``, when the record time ``outer`` (UTC) is a real
    instant: 0 when ``ts`` is that time; for a server's own stamp (its local time), the difference
    to the record time to the quarter hour, when the stamp is within :data:`_STAMP_LAG_S` of a
    quarter hour off it (a line is stamped twice within moments).  None without a zone."""
    if not instant or ts is None or outer is None:
        return None
    if ts == outer:
        return 0
    try:
        d = (datetime.fromisoformat(ts) - datetime.fromisoformat(outer)).total_seconds()
    except ValueError:
        return None
    quarter = round(d / 900) * 900
    if abs(d - quarter) > _STAMP_LAG_S or abs(quarter) > 14 * 3600:
        return None
    return int(quarter) // 60


class StreamParser:
    """Parses the records of one source; keeps per-stream state (classifier, open launch)."""

    def __init__(self, source_name: str, sglang_version: str | None = None) -> None:
        self.source_name = source_name
        self.sglang_version = sglang_version
        self.counts = LineCounts()
        self.unrecognized: list[Unrecognized] = []
        self.warnings: list[str] = []
        self._classifiers: dict[tuple, LineClassifier] = {}
        self._open: dict[tuple, LaunchAssembler] = {}
        self._done: list[tuple[int, LaunchAssembler | VllmLaunchAssembler]] = []
        self._order = 0
        self._orphan_lines = 0
        #: notes of the outer layer worth telling the user once per source (year inference, ...)
        self._notes: dict[str, int] = {}
        #: Runtime-only fragments (assemblers with ``.stream`` and ``.events``) of a launch that
        #: started before this input begins: not launches here, kept for the store to attach.
        self.orphans: list[LaunchAssembler | VllmLaunchAssembler] = []
        #: after finish(): the assembler of each launch, in the order of the launches
        self.assemblers: list[LaunchAssembler | VllmLaunchAssembler] = []
        #: lines per unit of a journal or capture (other programs' lines are counted apart)
        self._units: dict[tuple, _UnitTally] = {}
        #: the unit of each kept unrecognized line (None: no unit)
        self._unrecognized_units: list[tuple | None] = []
        #: pids of SGLang lines the bulk path counted itself (their units are SGLang's)
        self.sglang_pids: set[int] = set()
        #: the stream of the last record fed
        self._last_key: tuple | None = None
        #: vLLM launches open per stream (beside SGLang's), the engine each stream printed last, and
        #: vLLM lines held back until a vLLM engine anchor shows (vLLM's library lines inside an
        #: SGLang 0.2-0.3 launch are that launch's noise)
        self._open_vllm: dict[tuple, VllmLaunchAssembler] = {}
        self._engine_of: dict[tuple, str] = {}
        self._held_vllm: dict[tuple, list[Event]] = {}
        #: the input's modification time: the year of vLLM's year-less stamps when no outer layer dates a line
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

    def feed(self, rec: Record) -> None:
        if rec.text:
            rec.text = redact(rec.text)  # no stage after this one sees a secret (logparse.sources.redact)
        if rec.notes:
            self._read_notes(rec)
        key = rec.stream_key()
        if key != self._last_key and key == _NO_STREAM and self._last_key is not None:
            # A line with no outer layer right after a journal line whose server_args payload is
            # open: the rest of it, wrapped by a terminal or a paste (the classifier decides).
            last = self._classifiers.get(self._last_key)
            if last is not None and last.mode == "server_args":
                key = self._last_key
        self._last_key = key
        clf = self._classifiers.get(key)
        if clf is None:
            clf = self._classifiers[key] = LineClassifier()
        res = clf.classify(rec)
        self.counts.add(res.status)
        unit = None
        if rec.unit is not None:
            unit = (rec.host, rec.unit)
            self._tally(unit, rec, res)
        if res.status == "unrecognized":
            if len(self.unrecognized) < MAX_UNRECOGNIZED_KEPT:
                text = res.text or (rec.text or "")
                self.unrecognized.append(
                    Unrecognized(self.source_name, rec.line_no, res.reason, text[:MAX_UNRECOGNIZED_TEXT])
                )
                self._unrecognized_units.append(unit)
            return
        if res.status != "parsed":
            return
        if res.parsed is None:  # the next piece of a wrapped server_args line
            self._continue_server_args(key, res.text)
            return
        prefix, gpu, (kind, fields, form) = res.parsed
        bound_fields(
            fields, res.text, strings=True
        )  # figures out of their bounds (or text where one belongs): None, noted for the launch's warnings
        ev = Event(kind=kind, fields=fields, form=form, source=self.source_name, line_no=rec.line_no, text=res.text)
        outer = _iso_utc(rec.ts)
        ev.record_ts = outer
        if _is_vllm_event(prefix, kind, self._engine_of.get(key)):
            if prefix.get("engine") == "vllm":
                apply_vllm_prefix(ev, prefix)
            ev.ts = _vllm_time(ev.ts, outer, self.mtime)
            self._checked_stamp(ev, rec.line_no)
            ev.ts = ev.ts or outer
            ev.utc_offset = utc_offset(ev.ts, outer, record_time_is_instant(rec.fmt, rec.notes))
            self._add_vllm_event(key, ev)
            return
        apply_prefix(ev, prefix, gpu)
        self._checked_stamp(ev, rec.line_no)
        # no date in SGLang's prefix: use the outer layer's time
        if outer and (ev.ts is None or len(ev.ts) <= 12):
            ev.ts = outer if ev.ts is None else outer[:11] + ev.ts
        ev.utc_offset = utc_offset(ev.ts, outer, record_time_is_instant(rec.fmt, rec.notes))
        if kind in SCHEDULER_KINDS and ev.tp_rank is None:
            ev.tp_rank = 0  # a single-GPU scheduler (0.4.6.post2+) or DP without TP prints no TP tag
        self._add_event(key, ev)

    def _tally(self, unit: tuple, rec: Record, res) -> None:
        t = self._units.get(unit)
        if t is None:
            t = self._units[unit] = _UnitTally()
        if rec.pid is not None:
            t.pids.add(rec.pid)
        if t.sglang:
            return
        if res.status == "parsed":
            t.parsed += 1
            if (res.parsed is None or res.parsed[2][0] not in _GENERIC_KINDS) or _sglang_line(rec.text):
                t.sglang = True
        elif _sglang_line(rec.text):
            t.sglang = True
        elif res.status == "noise":
            t.noise += 1
        else:
            t.unrecognized += 1

    def _other_units(self) -> set[tuple]:
        """Units none of whose lines is SGLang's (nginx next to sglang.service): their lines move
        from parsed/noise/unrecognized to ``other_units``, their unrecognized lines are not kept."""
        ours = {
            unit
            for unit, t in self._units.items()
            if t.sglang or "sglang" in str(unit[1]).lower() or (t.pids and not t.pids.isdisjoint(self.sglang_pids))
        }
        if not ours:
            # No unit shows an SGLang line (a journal window holding only a traceback's tail, say):
            # nothing tells SGLang's unit from the others, so every line stays SGLang's.
            return set()
        others: dict[tuple, int] = {}
        for unit, t in self._units.items():
            if unit in ours:
                continue
            n = t.parsed + t.noise + t.unrecognized
            self.counts.parsed -= t.parsed
            self.counts.noise -= t.noise
            self.counts.unrecognized -= t.unrecognized
            self.counts.other_units += n
            others[unit] = n
        if not others:
            return set()
        kept = [(u, w) for u, w in zip(self.unrecognized, self._unrecognized_units) if w not in others]
        self.unrecognized = [u for u, _ in kept]
        self._unrecognized_units = [w for _, w in kept]
        shown = ", ".join(f"{unit[1]}: {n}" for unit, n in list(others.items())[:5]) + (
            ", …" if len(others) > 5 else ""
        )
        total = sum(others.values())
        self.warnings.append(
            f"{self.source_name}: {total} line{'s' if total != 1 else ''} of other units ({shown}) "
            "are not SGLang's: counted apart, as other_units"
        )
        return set(others)

    def _continue_server_args(self, key: tuple, piece: str) -> None:
        """Rejoin a ``server_args`` line a terminal or a paste wrapped (the classifier said this
        line goes on with its payload): the event gets the whole payload back."""
        cur = self._open.get(key)
        ev = cur.events[-1] if cur is not None and cur.events else None
        if ev is None or ev.kind != "server_args":
            return
        ev.fields["payload"] = ev.fields.get("payload", "") + piece
        ev.fields["wrapped_lines"] = ev.fields.get("wrapped_lines", 1) + 1
        ev.text += piece

    def end_multiline_records(self) -> None:
        """Lines fed elsewhere (the bulk path counts most lines itself) were well-formed SGLang
        lines: they end any multi-line record (traceback, warning) open on any stream."""
        for clf in self._classifiers.values():
            clf.end_multiline()

    def add_runtime(self, key: tuple, agg: dict, stamps: Any = None) -> None:
        """Merge a vectorized runtime aggregate into the launch open on this stream
        (``stamps``: the stamps of its batch lines, a polars frame of ``ts``, when the reader
        kept them)."""
        cur = self._open.get(key)
        if cur is None:
            cur = self._open[key] = LaunchAssembler(self.source_name, key)
            self._order += 1
            cur.order = self._order  # type: ignore[attr-defined]
        cur.runtime.merge(agg)
        if stamps is not None:
            self.on_batch_stamps(cur, stamps)

    def on_batch_stamps(self, asm: LaunchAssembler, stamps: Any) -> None:
        """Called with the batch lines per stamp the bulk path counted (see :meth:`on_batch`)."""

    def _add_vllm_event(self, key: tuple, ev: Event) -> None:
        """A vLLM event joins the vLLM launch open on its stream; the first engine anchor opens one
        (with the vLLM lines held back before it); without one, vLLM lines are held back."""
        cur = self._open_vllm.get(key)
        if cur is None:
            if ev.kind not in VLLM_OPENING_KINDS:
                held = self._held_vllm.setdefault(key, [])
                if ev.kind.startswith("vllm_") and len(held) < _MAX_HELD_VLLM:
                    held.append(ev)
                return
            cur = self._new_vllm(key, self._generic_head(key, ev))
        elif cur.starts_new_launch(ev):
            self._close_vllm(key)
            cur = self._new_vllm(key)
        cur.add(ev)
        self._engine_of[key] = "vllm"

    def _generic_head(self, key: tuple, ev: Event) -> list[Event]:
        """The generic lines (a traceback, uvicorn's) a stream printed before its first engine line,
        when that line is a vLLM one no launch begins with (a KV figure, a startup failure): the
        input begins inside a vLLM launch, and those lines are that launch's, as in a parse of the
        whole log (where the stream is known to be vLLM's by then).  Before a line a launch can
        begin with, they stay a piece of the launch before it."""
        head = self._open.get(key)
        if (
            ev.kind in _VLLM_BEGIN_KINDS
            or head is None
            or head.runtime.batch_lines
            or not all(e.kind in _GENERIC_KINDS for e in head.events)
        ):
            return []
        del self._open[key]
        return list(head.events)

    def _new_vllm(self, key: tuple, head: list[Event] | None = None) -> VllmLaunchAssembler:
        cur = self._open_vllm[key] = VllmLaunchAssembler(self.source_name, key)
        self._order += 1
        cur.order = self._order  # type: ignore[attr-defined]
        for held in sorted([*(head or []), *self._held_vllm.pop(key, [])], key=lambda e: e.line_no):
            cur.add(held)
        return cur

    def _close_vllm(self, key: tuple) -> None:
        asm = self._open_vllm.pop(key, None)
        if asm is not None:
            self._done.append((asm.order, asm))  # type: ignore[attr-defined]

    def _add_event(self, key: tuple, ev: Event) -> None:
        if ev.kind in STARTUP_KINDS and ev.kind not in _GENERIC_KINDS:  # a traceback names no engine
            self._engine_of[key] = "sglang"
            self._held_vllm.pop(key, None)
        cur = self._open.get(key)
        if cur is None or cur.starts_new_launch(ev):
            if cur is not None:
                self._close(key)
            cur = self._open[key] = LaunchAssembler(self.source_name, key)
            self._order += 1
            cur.order = self._order  # type: ignore[attr-defined]
        cur.add(ev)
        if ev.kind in ("decode_batch", "prefill_batch"):
            self.on_batch(cur, ev)

    def on_batch(self, asm: LaunchAssembler, ev: Event) -> None:
        """Called for every batch line the record path sees (the store counts them per second
        to merge overlapping journal windows exactly); the bulk path sends aggregates only."""

    def _close(self, key: tuple) -> None:
        asm = self._open.pop(key, None)
        if asm is not None:
            self._done.append((asm.order, asm))  # type: ignore[attr-defined]

    def _held_vllm_orphans(self) -> None:
        """vLLM lines of a stream on which no vLLM launch opened (a piece of a log that begins after
        the launch's first lines) are a piece of a launch that started before the input, like the
        runtime lines of one: counted and kept with the other lines of that stream before it, so
        the store can join them to their launch."""
        for key, held in self._held_vllm.items():
            if not held:
                continue
            piece = VllmLaunchAssembler(self.source_name, key)
            others = [o for o in self.orphans if tuple(o.stream) == tuple(key)]
            self.orphans = [o for o in self.orphans if tuple(o.stream) != tuple(key)]
            for ev in sorted([*held, *(e for o in others for e in o.events)], key=lambda e: e.line_no):
                piece.add(ev)
            self._orphan_lines += len(held)
            self.orphans.append(piece)
        self._held_vllm.clear()

    def finish(self) -> tuple[list, LineCounts, list[Unrecognized], list[str]]:
        for key in list(self._open):
            self._close(key)
        for key in list(self._open_vllm):
            self._close_vllm(key)
        others = self._other_units()
        launches: list = []
        for _, asm in sorted(self._done, key=lambda t: t[0]):
            if isinstance(asm, VllmLaunchAssembler):
                self.assemblers.append(asm)
                launches.append(asm.finish(ordinal=self.ordinal_base + len(launches) + 1))
                continue
            if not any(e.kind in STARTUP_KINDS for e in asm.events):
                if (asm.stream[0], asm.stream[1]) in others:
                    continue  # an exception line of another program: counted as other_units
                self._orphan_lines += len(asm.events)
                self.orphans.append(asm)
                continue
            self.assemblers.append(asm)
            launches.append(asm.finish(self.sglang_version, ordinal=self.ordinal_base + len(launches) + 1))
        self._held_vllm_orphans()
        make_distinct(launches)
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
        return launches, self.counts, self.unrecognized, self.warnings


def parse_sources(
    sources: Iterable,
    sglang_version: str | None = None,
    on_record: Callable[[Record], None] | None = None,
    bulk: bool = True,
    block_bytes: int | None = None,
    on_source: Callable[[Any, StreamParser], None] | None = None,
) -> ParseResult:
    """Parse sources.  ``bulk`` lets large plain/journal inputs take the vectorized path
    (:mod:`logparse.grammar.bulk`; ``"force"``: whatever their size); ``on_record`` (a per-record
    callback) forces the record path; ``on_source(src, parser)`` is told of each source as its
    parse begins (progress: the source counts its bytes, the parser its lines)."""
    from logparse.grammar import bulk as bulk_mod

    result = ParseResult()
    for src in sources:
        sp = StreamParser(src.name, sglang_version)
        sp.mtime = getattr(src, "mtime", None)
        if on_source is not None:
            on_source(src, sp)
        if bulk and on_record is None and bulk_mod.supported(src, force=bulk == "force"):
            bulk_mod.BulkReader(src, sp, block_bytes).run()
        else:
            for rec in src.records():
                if on_record is not None:
                    on_record(rec)
                sp.feed(rec)
        launches, counts, unrec, warns = sp.finish()
        result.launches.extend(launches)
        result.lines.merge(counts)
        result.unrecognized.extend(unrec)
        result.warnings.extend(getattr(src, "warnings", []))
        result.warnings.extend(warns)
        result.sources.append(
            SourceSummary(
                src.name,
                getattr(src, "fmt", "plain"),
                getattr(src, "bytes_read", None),
                counts,
                getattr(src, "content_hash", None),
            )
        )
    return result


def parse_paths(
    paths: Sequence[str], input_format: str | None = None, sglang_version: str | None = None
) -> ParseResult:
    from logparse.sources import open_inputs

    return parse_sources(open_inputs(list(paths), input_format=input_format), sglang_version)


def parse_text(text: str | bytes, name: str = "<text>", sglang_version: str | None = None) -> ParseResult:
    from logparse.sources import text_source

    return parse_sources([text_source(name, text)], sglang_version)

"""The line parser: one physical line in, its outer layers peeled, one :class:`Record` out.

:meth:`LineParser.general` applies the layers of a line in a fixed order, each optional,
so that a line may mix them (``docker compose`` over ``docker --timestamps`` over a Ray
actor prefix over an SGLang line).  Each layer is read by its format module
(:mod:`logparse.sources.formats`)::

    1. markers          -- Boot <id> --, -- No entries --, Hint: ...   formats.journal_cat (whole line)
    2. compose prefix   name  | ...        (only in a compose log)     formats.compose
    3. kubectl prefix   [pod/NAME/CONTAINER] ...                       formats.kubectl
    2b. outer wrappers  TUI borders, Buildkite stamps, "  | " gutters  formats.wrappers (phase outer)
    4. outer time       journald short* header, or an RFC 3339 time    formats.journal_headers, formats.docker
    5. inner wrappers   Docker Desktop time, Ray (Actor pid=N, ip=X),  formats.docker_desktop, .ray, .pylogging
                        Python logging "2025-03-07 23:50:27,531 - name - INFO - ",
                        FastChat, loguru, GitLab's stream tag          formats.wrappers (phase inner)
    6. free text        "node3: [YYYY-mm-dd HH:MM:SS...] msg" -> the SGLang line   formats.plain

Before those, :meth:`LineParser.parse` takes the lines that belong to something already
open (a json-pretty object, the continuation of a multi-line MESSAGE, a ``Hint:``), the
common line of the input's own short* header, and the journal JSON lines (``-o json``,
``json-seq``, ``json-sse``, ``json-pretty``: recognised by their first byte).  The export
and verbose readers use :meth:`entry_records` for their entries and :meth:`parse` for
anything else.

Hot path: a plain SGLang line (``[2026-...``) is taken by the caller while :attr:`fast` is
set (one slice comparison and a decode); a short* line of the input's own header costs one
regexp and a cached header; every other regexp is tried only after a first-byte test.
"""

from __future__ import annotations

import re
from types import ModuleType

from logparse.sources.formats import (
    compose,
    docker,
    docker_desktop,
    journal_cat,
    journal_entry,
    journal_headers,
    journal_json,
    json_logs,
    kubectl,
    plain,
    pylogging,
    ray,
)
from logparse.sources.formats.journal_entry import BLOB_RE
from logparse.sources.formats.journal_json import PendingObject
from logparse.sources.formats.systemd_units import NOTE_UNIT_FROM_STARTED, UNIT_SUFFIXES, UnitTracker
from logparse.sources.formats.wrappers import OUTER_FIRST_BYTES, WrapperPeeler
from logparse.sources.layers import Layers, ProblemSink
from logparse.sources.records import Record
from logparse.sources.timestamps import bad_time_note

_BOM = b"\xef\xbb\xbf"
_SPACES: dict[int, bytes] = {}


def _spaces(n: int) -> bytes:
    s = _SPACES.get(n)
    if s is None:
        s = _SPACES[n] = b" " * n
    return s


class LineParser:
    """Turns physical lines into records; keeps the little state a journal rendering needs.

    ``source``: what problems and cursors are reported to (the :class:`Source`, or a stub
    when sniffing); ``primary``: the input's format (sniffed or named)."""

    def __init__(self, source: ProblemSink, primary: str):
        self.source = source
        self.src = source.name
        self.primary = primary
        self.journal = primary.startswith("journal-")
        self.json_primary = primary in journal_json.FORMATS
        self.compose = primary == "compose"
        #: format name of a line with no outer layer ("-o cat" renderings are plain text)
        self.plain_fmt = "journal-cat" if primary == "journal-cat" else "plain"
        #: format name of an RFC 3339 time (docker's and kubectl's --timestamps look alike)
        self.time_fmt = "kubectl" if primary == "kubectl" else "docker"
        self.boot: str | None = None  # from "-- Boot <id> --" (short* renderings)
        self.reboots = 0
        self.cont: tuple[bytes, Record] | None = None  # (indent, entry) of a multi-line MESSAGE
        self.hint = False  # inside journalctl's "Hint: ..." paragraph
        self.pending: PendingObject | None = None  # json-pretty object being collected
        self.docker_pieces: list[str] = []  # the pieces of a long line docker split over several objects
        self.docker_start = 0  # the line of its first piece
        #: the input's own short* header style, tried first on every line
        self.primary_style: ModuleType | None = journal_headers.STYLE_OF.get(primary)
        self.primary_re: re.Pattern | None = self.primary_style.HEADER_RE if self.primary_style else None
        self.headers = journal_headers.HeaderReader(primary)
        self.units = UnitTracker()
        #: a record with a year-less timestamp (tuple in ``ts``) has been produced
        self.yearless = False
        #: CI gutters, terminal-UI borders, supervisors' logging around each line (:mod:`.formats.wrappers`)
        self.wrappers = WrapperPeeler()
        #: the caller may take the plain fast path (no state that a line could change)
        self.fast = not self.compose and self.plain_fmt == "plain"

    # -- public --------------------------------------------------------------------------
    def parse(self, n: int, raw: bytes) -> Record | list[Record] | None:
        """Record, list of records, or None (line absorbed into a pending json-pretty object)."""
        r: Record | list[Record] | None
        if self.pending is not None:
            r = self._pretty_line(n, raw)
            self._update_fast()
            return r
        if self.cont is not None:
            r = self._continuation(n, raw, self.cont)
            if r is not None:
                return r
        if self.hint:
            if journal_cat.is_hint_continuation(raw):
                return self._marker(n, raw)
            self.hint = False
        if self.primary_re is not None:  # a short* rendering: its common line takes a compact path
            m = self.primary_re.match(raw)
            if m is not None:
                r = self._own_header_line(n, raw, m)
                if r is not None:
                    return r
        if journal_json.starts_object(raw):
            r = self._json_line(n, raw)
        elif not raw and self.json_primary:
            r = self._marker(n, raw)
        else:
            r = self.general(n, raw)
        self._update_fast()
        return r

    def general(self, n: int, raw: bytes) -> Record:
        """Peel the layers of one line, in the order of the module docstring."""
        # (each step is called only when the first bytes allow its layer: a call costs more
        # than the test, and docker/compose/kubectl inputs take this path line after line)
        if raw[:1] in journal_cat.FIRST_BYTES:
            marker = self._marker_line(n, raw)
            if marker is not None:
                return marker
        line = Layers(raw[3:] if raw.startswith(_BOM) else raw)
        if self.compose:
            compose.peel(line)
        first = line.raw[line.pos : line.pos + 1]
        if first and first[0] in OUTER_FIRST_BYTES:
            self.wrappers.peel(line, "outer")
        if line.raw.startswith(kubectl.PREFIX_START, line.pos):
            kubectl.peel_prefix(line)
        lost = self._outer_time(n, line)
        if lost is not None:
            return lost
        if line.raw[line.pos : line.pos + 1] != b"[":  # "[": SGLang's own line starts here
            self._inner_wrappers(line)
            if line.raw[line.pos : line.pos + 1] != b"[":
                plain.peel_free_text(line)
        return self._record(n, line)

    def finish(self) -> list[Record]:
        """Records still held at the end of the input (an unterminated json-pretty object, the
        pieces of a line docker split whose last piece never came)."""
        if self.docker_pieces:
            n, text = self.docker_start, "".join(self.docker_pieces)
            self.docker_pieces = []
            return [self.general(n, text.encode("utf-8", "surrogatepass"))] + self.finish()
        p = self.pending
        if p is None:
            return []
        self.pending = None
        self.source.note_problem("invalid-json")
        return self._as_text(p)

    def entry_records(self, n: int, fields: dict, values: list, fmt: str) -> list[Record]:
        """Records of one journal entry (json, export, verbose): see :mod:`.formats.journal_entry`."""
        return journal_entry.entry_records(n, fields, values, fmt, self.source)

    def end_continuation(self) -> None:
        """The lines read elsewhere since the last :meth:`parse` (the bulk path reads most
        lines itself) were whole SGLang lines: they end a multi-line MESSAGE's continuation."""
        self.cont = None
        self._update_fast()

    # -- before the layers ---------------------------------------------------------------
    def _update_fast(self) -> None:
        self.fast = not (
            self.compose
            or self.plain_fmt != "plain"
            or self.pending is not None
            or self.hint
            or self.yearless
            or self.cont
        )

    def _continuation(self, n: int, raw: bytes, cont: tuple[bytes, Record]) -> Record | None:
        """A further line of a multi-line MESSAGE in a short* rendering: journalctl indents it
        to the width of the header; it gets the metadata of its entry (``cont``: indent, entry)."""
        indent, entry = cont
        if raw[:1] == b" " and (raw[: len(indent)] == indent or not raw.strip(b" ")):
            e = entry
            text = raw[len(indent) :].decode("utf-8", "replace")
            return Record(
                n, text, self.src, e.ts, e.host, e.unit, e.pid, e.boot, None, False, None, e.fmt, list(e.notes)
            )
        self.cont = None
        return None

    def _own_header_line(self, n: int, raw: bytes, m: re.Match) -> Record | None:
        """The common short* line: the input's own header and an SGLang line.  None: let
        :meth:`general` handle it (systemd's lines, blobs, anything else after the header)."""
        pos = m.end()
        if raw[pos : pos + 1] != b"[" or raw.endswith(b" blob data]"):
            return None
        style = self.primary_style
        assert style is not None  # a header of the input's own style matched
        host, ident, pid, ts, jfmt, tnote, _ = self.headers.read(m, style)
        if pid == 1 or ident == "systemd":
            return None
        notes = [] if tnote is None else [tnote]
        if ts.__class__ is tuple:
            self.yearless = True
        unit = ident
        if not ident.endswith(UNIT_SUFFIXES):
            u = self.units.unit_of(host, ident, pid)
            if u is not None:
                unit = u
                notes.append(NOTE_UNIT_FROM_STARTED)
        text = raw[pos:].decode("utf-8", "replace")
        r = Record(n, text, self.src, ts, host, unit, pid, self.boot, None, False, None, jfmt, notes)
        self.cont = (_spaces(pos), r)
        self.fast = False
        return r

    # -- journal JSON ----------------------------------------------------------------------
    def _json_line(self, n: int, raw: bytes) -> Record | list[Record] | None:
        text, fmt = journal_json.unwrap(raw, self.primary)
        obj = journal_json.loads(text)
        if obj is None:
            depth = journal_json.brace_depth(text)
            if depth > 0:  # an object over several lines (json-pretty): collect it
                self.pending = PendingObject(n, raw, text, depth, fmt)
                return None
        if not isinstance(obj, dict):
            if self.json_primary:
                self.source.note_problem("invalid-json")
            return self.general(n, raw)
        return self.object_records(n, obj, fmt)

    def object_records(self, n: int, obj: dict, fmt: str) -> list[Record]:
        """Records of one JSON object: a journal entry, or a docker json-file / JSON logging record."""
        kind = json_logs.format_of(obj)
        if kind == "docker-json":
            return [self._docker_json(n, obj)]
        if kind == "json-log":
            return self._json_log(n, obj)
        return self.entry_records(n, journal_json.entry_fields(obj), journal_json.message_values(obj), fmt)

    def _docker_json(self, n: int, obj: dict) -> Record:
        text = obj["log"]
        held = sum(len(p) for p in self.docker_pieces)
        if not text.endswith("\n") and held < json_logs.MAX_JOINED:  # a piece: the line goes on in the next object
            if not self.docker_pieces:
                self.docker_start = n
            self.docker_pieces.append(text)
            return Record(n, "", self.src, json_logs.docker_time(obj), fmt="docker-json")
        whole = "".join(self.docker_pieces) + text
        self.docker_pieces = []
        r = self.general(n, whole.rstrip("\r\n").encode("utf-8", "surrogatepass"))
        ts = json_logs.docker_time(obj)
        if ts is not None:  # docker's time is the outer one
            r.ts = ts
        elif obj.get("time"):
            r.notes.append(bad_time_note(str(obj["time"])[:80]))
        if r.fmt == self.plain_fmt:
            r.fmt = "docker-json"
        return r

    def _json_log(self, n: int, obj: dict) -> list[Record]:
        ts = json_logs.asctime(obj)
        notes = [json_logs.NOTE_TIME] if ts is not None else []
        if ts is None and obj.get("asctime"):
            notes = [bad_time_note(str(obj["asctime"])[:80])]
        lines, tagged = json_logs.log_lines(obj)
        if tagged:  # the engine's own text (vLLM's): no outer layer to peel
            return [
                Record(n, text, self.src, ts, None, None, None, self.boot, fmt="json-log", notes=notes)
                for text in lines
            ]
        out = []
        for text in lines:
            r = self.general(n, text.encode("utf-8", "surrogatepass"))
            if r.ts is None:
                r.ts, r.notes = ts, r.notes + notes
            if r.fmt == self.plain_fmt:
                r.fmt = "json-log"
            out.append(r)
        return out

    def _pretty_line(self, n: int, raw: bytes) -> list[Record] | None:
        p = self.pending
        assert p is not None
        if journal_json.starts_object(raw):
            # A new object where the collected one should go on: that one was a line cut short (a
            # json / json-seq line truncated mid-object), never a json-pretty object (its inner
            # lines are indented).  It costs its own lines, not every line after it.
            self.pending = None
            self.source.note_problem("invalid-json")
            r = self.parse(n, raw)
            return self._as_text(p) + ([] if r is None else r if isinstance(r, list) else [r])
        if p.add(raw):
            self.pending = None
            obj = p.value()
            if isinstance(obj, dict):
                return self.object_records(p.start, obj, p.fmt)
            self.source.note_problem("invalid-json")
            return self._as_text(p)
        if p.too_big:
            return self.finish()
        return None

    def _as_text(self, p: PendingObject) -> list[Record]:
        return [self.general(p.start + i, ln) for i, ln in enumerate(p.lines)]

    # -- the layers (general) ----------------------------------------------------------------
    def _marker_line(self, n: int, raw: bytes) -> Record | None:
        """Step 1: journalctl's own lines; boot markers start a new boot."""
        mk = journal_cat.marker(raw, self.journal)
        if mk is None:
            return None
        if mk.kind == "boot" or mk.kind == "reboot":
            if mk.kind == "boot":
                self.boot = mk.value
            else:
                self.reboots += 1
                self.boot = f"reboot-{self.reboots}"
            self.units.new_boot()
        elif mk.kind == "hint":
            self.hint = True
        return self._marker(n, raw, mk.value if mk.kind == "cursor" else None)

    def _marker(self, n: int, raw: bytes, cursor: str | None = None) -> Record:
        fmt = self.primary if self.journal else "journal"
        text = raw.decode("utf-8", "replace")
        return Record(n, text, self.src, None, None, None, None, self.boot, cursor, True, None, fmt, [])

    def _outer_time(self, n: int, line: Layers) -> Record | None:
        """Step 4: a journald short* header, else a docker/kubectl RFC 3339 time.  Returns the
        record of a message journalctl did not print (``[NB blob data]``), else None."""
        found = journal_headers.match(line.raw, line.pos, self.journal, self.compose)
        if found is not None:
            return self._journal_header(n, line, *found)
        if line.raw[line.pos : line.pos + 1].isdigit():
            docker.peel_timestamp(line, self.time_fmt)
        return None

    def _journal_header(self, n: int, line: Layers, m: re.Match, style: ModuleType) -> Record | None:
        raw = line.raw
        host, ident, pid, ts, jfmt, tnote, when = self.headers.read(m, style)
        line.pos = m.end()
        if m.start() == 0:
            line.header_end = m.end()
        if tnote is not None:
            line.notes.append(tnote)
        if ts.__class__ is tuple:
            self.yearless = True
        line.ts, line.host, line.pid, line.boot = ts, host, pid, self.boot
        if line.unit is None:
            line.unit = ident
        if line.fmt is None:
            line.fmt = jfmt
        if pid == 1 or ident == "systemd":
            unit = self.units.systemd_line(raw, line.pos)
            if unit is not None:
                line.unit = unit
        elif line.fmt == jfmt and not ident.endswith(UNIT_SUFFIXES):
            u = self.units.unit_of(host, ident, pid)
            if u is not None:
                line.unit = u
                line.notes.append(NOTE_UNIT_FROM_STARTED)
        if raw.endswith(b" blob data]"):
            mb = BLOB_RE.fullmatch(raw, line.pos)
            if mb is not None:
                return self._blob_record(n, line, mb.group(1).decode(), when)
        return None

    def _blob_record(self, n: int, line: Layers, size: str, when: str) -> Record:
        problem = (
            f"journalctl printed '[{size}B blob data]' instead of the message of {line.unit} at {when}: "
            "it holds control characters or invalid UTF-8 (a tqdm progress bar, ANSI colours); rerun "
            "journalctl with --all (-a), or use -o export"
        )
        self.source.note_problem("blob")
        r = Record(
            n,
            None,
            self.src,
            line.ts,
            line.host,
            line.unit,
            line.pid,
            line.boot,
            None,
            False,
            problem,
            line.fmt or self.primary,  # a blob line comes after a journal header, which names the format
            line.notes,
        )
        if line.header_end >= 0:
            self.cont = (_spaces(line.header_end), r)
        return r

    def _inner_wrappers(self, line: Layers) -> None:
        """Step 5: Docker Desktop time, Ray actor prefix, Python logging and the inner wrappers of
        :mod:`.formats.wrappers` (FastChat, loguru, GitLab's stream tag), nested up to 3."""
        for _ in range(3):
            raw, pos = line.raw, line.pos
            c = raw[pos : pos + 1]
            if c == b"(" or c == b"\x1b":
                if not ray.peel(line):
                    return
            elif c.isdigit() and raw[pos + 4 : pos + 5] == b"-" and raw[pos + 10 : pos + 11] == b" ":
                if not (pylogging.peel(line) or self.wrappers.peel(line, "inner") or docker_desktop.peel(line)):
                    return
            elif not (raw[pos + 2 : pos + 3] in (b"O", b"E") and self.wrappers.peel(line, "inner")):
                return

    def _record(self, n: int, line: Layers) -> Record:
        raw, pos = line.raw, line.pos
        text = raw[pos:].decode("utf-8", "replace") if pos else raw.decode("utf-8", "replace")
        fmt = line.fmt or self.plain_fmt
        r = Record(
            n, text, self.src, line.ts, line.host, line.unit, line.pid, line.boot, None, False, None, fmt, line.notes
        )
        if line.header_end >= 0:
            self.cont = (_spaces(line.header_end), r)
        return r

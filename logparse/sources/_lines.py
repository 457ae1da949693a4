"""Line-oriented formats: one physical line in, one :class:`Record` out.

:class:`LineParser` peels the outer layers of one line in a fixed order, each layer
optional, so that a line may mix them (``docker compose`` over ``docker --timestamps``
over a Ray actor prefix over an SGLang line)::

    1. markers            -- Boot <id> --, -- No entries --, Hint: ...      (whole line)
    2. compose prefix     name  | ...          (only when the input is a compose log)
    3. kubectl prefix     [pod/NAME/CONTAINER] ...
    4. outer time/header  journald short* header | RFC 3339 time (docker/kubectl -t)
    5. inner wrappers     Docker Desktop local time, Ray (Actor pid=N, ip=X),
                          Python logging "2025-03-07 23:50:27,531 - name - INFO - "
    6. free text          "whatever [YYYY-mm-dd HH:MM:SS...] msg" -> the SGLang line

Journal JSON lines (``-o json``, ``json-seq``, ``json-sse``, ``json-pretty``) are
recognised by their first byte and turned into records by :meth:`entry_records`, which
the export and verbose readers share.

Hot path: a plain SGLang line (``[2026-...``) costs one slice comparison and a decode;
every regex is compiled once per format and tried only after a first-byte dispatch.
"""

from __future__ import annotations

import json
import re

from logparse.sglang_prefix import BRACKET_BYTES_RE
from logparse.sources.records import Record

from ._time import (
    date_epoch,
    fmt_utc,
    frac_seconds,
    hms_seconds,
    month_number,
    offset_seconds,
    zone_offset,
)

RAY_REPEATED_RE = re.compile(rb" \[repeated \d+x across cluster\]\s*$")

# ---------------------------------------------------------------------------------------
# Regexes (bytes; one per format)

#: ``host ident[pid]: `` after any journald short* timestamp.  The host is optional
#: (``--no-hostname``): the lazy ``??`` first tries "no host", which only succeeds when
#: the first token is directly followed by ``[pid]:`` or ``:`` -- a hostname never is.
_TAIL = rb" (?:(?P<host>[^\s\[\]]+) )??(?P<ident>[^\s\[]+?)(?:\[(?P<pid>\d+)\])?:(?: |$)"

SHORT_RE = re.compile(rb"(?P<mon>[A-Z][a-z]{2}) (?P<day>[ \d]\d) (?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{1,6})?" + _TAIL)
#: short/short-precise with a non-English month name (LC_TIME of the rendering machine).
LOCALE_SHORT_RE = re.compile(
    rb"(?P<mon>[^\s\d:\[\](){}|]{2,16}) (?P<day>[ \d]\d) (?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{1,6})?" + _TAIL
)
ISO_RE = re.compile(
    rb"(?P<date>\d{4}-\d\d-\d\d)T(?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{1,9})?(?P<tz>Z|[+-]\d\d:?\d\d)" + _TAIL
)
FULL_RE = re.compile(
    rb"(?P<wd>[A-Z][a-z]{2}) (?P<date>\d{4}-\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{1,9})?"
    rb" (?P<tz>[A-Za-z][A-Za-z0-9/_+-]*|[+-]\d{2,4})" + _TAIL
)
UNIX_RE = re.compile(rb"(?P<unix>\d{9,11}\.\d{6})" + _TAIL)
MONO_RE = re.compile(rb"\[ *(?P<mono>\d+\.\d{6})(?P<delta> <[ \d.]+\*?>)?\]" + _TAIL)

#: docker logs --timestamps / kubectl logs --timestamps (RFC 3339, nanoseconds).
RFC_RE = re.compile(
    rb"(?P<date>\d{4}-\d\d-\d\d)T(?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{1,9})?(?P<tz>Z|[+-]\d\d:?\d\d)(?: |$)"
)
KUBE_RE = re.compile(rb"\[pod/(?P<pod>[^/\]\s]+)/(?P<ctr>[^/\]\s]+)\] ?")
COMPOSE_RE = re.compile(
    rb"(?:\x1b\[[\d;]*m)*(?P<svc>[A-Za-z0-9][\w.-]*) +(?:\x1b\[[\d;]*m)*\|(?:\x1b\[[\d;]*m)*(?: |$)"
)
RAY_RE = re.compile(
    rb"(?:\x1b\[[\d;]*m)?\((?:(?P<actor>[^\s()=]+) )?pid=(?P<pid>\d+)(?:, ip=(?P<ip>[^\s)]+))?\)"
    rb"(?:\x1b\[0m)?(?: |$)"
)
PYLOG_RE = re.compile(
    rb"(?P<date>\d{4}-\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d),(?P<ms>\d{3}) - (?P<name>[^ ]+) - "
    rb"(?P<level>[A-Z]+|Level \d+) - "
)
DESKTOP_RE = re.compile(rb"(?P<date>\d{4}-\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d{1,9})?[ \t]")
BLOB_RE = re.compile(rb"\[(\d+(?:\.\d+)?[KMG]?)B blob data\]")
#: systemd (pid 1 or a user manager) talking about a unit: "Started x.service - ...",
#: "x.service: Main process exited, ...", "Failed to start x.service ...".
SYSTEMD_UNIT_RE = re.compile(
    rb"(?:(?P<verb>[A-Z][a-z]+(?: to [a-z]+)?) )?"
    rb"(?P<unit>[\w@:.\\-]+\.(?:service|socket|scope|timer|target|mount|path|slice|swap|automount|device))\b"
)
#: systemd words saying that a unit's process is gone (its next process is a new launch)
_UNIT_GONE = (
    b"exited",
    b"Deactivated",
    b"Failed",
    b"Scheduled restart",
    b"Killing",
    b"Stopped",
    b"Consumed",
    b"Succeeded",
    b"killed",
)
_UNIT_SUFFIXES = (
    ".service",
    ".scope",
    ".socket",
    ".timer",
    ".target",
    ".mount",
    ".path",
    ".slice",
    ".swap",
    ".automount",
    ".device",
)
_HEX32 = re.compile(rb"[0-9a-f]{32}")

#: short* renderings: the header regex tried first on every line, and its style
_PRIMARY_HEADER = {
    "journal-short": (SHORT_RE, "short"),
    "journal-short-precise": (SHORT_RE, "short"),
    "journal-short-iso": (ISO_RE, "iso"),
    "journal-short-iso-precise": (ISO_RE, "iso"),
    "journal-short-full": (FULL_RE, "full"),
    "journal-with-unit": (FULL_RE, "full"),
    "journal-short-unix": (UNIX_RE, "unix"),
    "journal-short-monotonic": (MONO_RE, "mono"),
    "journal-short-delta": (MONO_RE, "mono"),
}

_BOM = b"\xef\xbb\xbf"
_SPACES: dict[int, bytes] = {}

NOTE_UNIT_FROM_STARTED = "unit from systemd's 'Started' line before this process's first line"
NOTE_DESKTOP = "Docker Desktop local time read as UTC"
NOTE_PYLOG_TIME = "time from the Python logging wrapper (local time read as UTC)"

#: The journal JSON renderings (one entry per line, or per object for json-pretty).
JSON_FORMATS = ("journal-json", "journal-json-seq", "journal-json-pretty", "journal-json-sse")

MAX_PENDING_BYTES = 64 << 20  # a json-pretty object larger than this is read as text

_MISSING = object()


_JSON_STRING_RE = re.compile(rb'"(?:[^"\\\n]|\\.)*"')


def _brace_depth(line: bytes) -> int:
    """Net ``{`` minus ``}`` of a line of JSON, outside strings."""
    if b'"' in line:
        line = _JSON_STRING_RE.sub(b"", line)
    return line.count(b"{") - line.count(b"}")


def _spaces(n: int) -> bytes:
    s = _SPACES.get(n)
    if s is None:
        s = _SPACES[n] = b" " * n
    return s


def _dec(b: bytes | None) -> str | None:
    return None if b is None else b.decode("utf-8", "replace")


def _field_str(v) -> str | None:
    """A journal JSON value as a string: str, [byte values], or [values] (take the first)."""
    if v is None or v.__class__ is str:
        return v
    if isinstance(v, list) and v:
        if all(isinstance(x, int) for x in v):
            try:
                return bytes(v).decode("utf-8", "replace")
            except ValueError:
                return None
        return _field_str(v[0])
    return str(v)


def _to_int(s: str | None) -> int | None:
    if s is None:
        return None
    try:
        return int(s)
    except ValueError:
        return None


class LineParser:
    """Turns physical lines into records; keeps the little state a journal rendering needs."""

    def __init__(self, source, primary: str):
        #: the Source (name, warnings counter, last_cursor); may be a stub when sniffing
        self.source = source
        self.src = source.name
        self.primary = primary
        self.journal = primary.startswith("journal-")
        self.json_primary = primary in JSON_FORMATS
        self.compose = primary == "compose"
        #: format name of a line with no outer layer ("-o cat" renderings are plain text)
        self.plain_fmt = "journal-cat" if primary == "journal-cat" else "plain"
        self.kubectl = primary == "kubectl"
        self.boot: str | None = None  # from "-- Boot <id> --" (short* renderings)
        self.reboots = 0
        self.cont: tuple[bytes, Record] | None = None  # multi-line MESSAGE continuation
        self.hint = False
        self.pending: list[bytes] | None = None  # json-pretty object being collected
        self.pending_text: list[bytes] = []
        self.pending_start = 0
        self.pending_size = 0
        self.pending_depth = 0
        self.pending_fmt = "journal-json-pretty"
        self.jre, self.jstyle = _PRIMARY_HEADER.get(primary, (None, None))
        self._hcache: dict[bytes, tuple] = {}  # header bytes -> _header_info()
        self.waiting: list[str] = []  # units systemd just started, no process seen yet
        self.claimed: dict[str, int] = {}  # unit -> pid taken for it
        self.pid_unit: dict[tuple, str | None] = {}  # (host, ident, pid) -> unit or None
        #: a record with a year-less timestamp (tuple in ``ts``) has been produced
        self.yearless = False
        #: the caller may take the plain fast path (no state that a line could change)
        self.fast = not self.compose and self.plain_fmt == "plain"

    # -----------------------------------------------------------------------------------
    def _update_fast(self) -> None:
        self.fast = not (
            self.compose
            or self.plain_fmt != "plain"
            or self.pending is not None
            or self.hint
            or self.yearless
            or self.cont
        )

    def parse(self, n: int, raw: bytes):
        """Record, list of records, or None (line absorbed into a pending json-pretty object)."""
        if self.pending is not None:
            r = self._pretty_line(n, raw)
            self._update_fast()
            return r
        c = raw[:1]
        if self.cont is not None:
            if c == b" ":
                sp, t = self.cont
                w = len(sp)
                if raw[:w] == sp or not raw.strip(b" "):
                    return Record(
                        n,
                        raw[w:].decode("utf-8", "replace"),
                        self.src,
                        t.ts,
                        t.host,
                        t.unit,
                        t.pid,
                        t.boot,
                        None,
                        False,
                        None,
                        t.fmt,
                        list(t.notes),
                    )
            self.cont = None
        if self.hint:
            if raw.startswith(b"      "):  # the hint's indented continuation lines
                return self._marker(n, raw)
            self.hint = False
        jre = self.jre
        if jre is not None:  # a short* rendering: its common line takes a compact path
            m = jre.match(raw)
            if m is not None:
                r = self._journal_line(n, raw, m)
                if r is not None:
                    return r
        if c == b"{" or c == b"\x1e" or (c == b"d" and raw.startswith(b"data: {")):
            r = self._json(n, raw)
        elif not raw and self.json_primary:
            r = self._marker(n, raw)
        else:
            r = self.general(n, raw)
        self._update_fast()
        return r

    def finish(self) -> list[Record]:
        """Records still held at the end of the input (an unterminated json-pretty object)."""
        if self.pending is None:
            return []
        lines, start = self.pending, self.pending_start
        self.pending = None
        self.source._problem("invalid-json")
        return [self.general(start + i, ln) for i, ln in enumerate(lines)]

    # -----------------------------------------------------------------------------------
    def _journal_line(self, n: int, raw: bytes, m) -> Record | None:
        """The common short* line: header + an SGLang line.  None: let general() handle it."""
        pos = m.end()
        if raw[pos : pos + 1] != b"[" or raw.endswith(b" blob data]"):
            return None
        key = raw[:pos]
        info = self._hcache.get(key)
        if info is None:
            info = self._header_info(m, self.jstyle)
            if len(self._hcache) > 4096:
                self._hcache.clear()
            self._hcache[key] = info
        host, ident, pid, ts, jfmt, tnote, _ = info
        if pid == 1 or ident == "systemd":
            return None
        notes = [] if tnote is None else [tnote]
        if ts.__class__ is tuple:
            self.yearless = True
        unit = ident
        if not ident.endswith(_UNIT_SUFFIXES):
            u = self._unit_of(host, ident, pid)
            if u is not None:
                unit = u
                notes.append(NOTE_UNIT_FROM_STARTED)
        r = Record(
            n,
            raw[pos:].decode("utf-8", "replace"),
            self.src,
            ts,
            host,
            unit,
            pid,
            self.boot,
            None,
            False,
            None,
            jfmt,
            notes,
        )
        self.cont = (_spaces(pos), r)
        self.fast = False
        return r

    def _header_info(self, m, style: str) -> tuple:
        """(host, ident, pid, ts, format, note, time text) of a journald short* header."""
        g = m.group
        h, ident_b, p = g("host", "ident", "pid")
        host = h.decode("utf-8", "replace") if h is not None else None
        ident = ident_b.decode("utf-8", "replace")
        pid = int(p) if p is not None else None
        when = m.string[m.start() : m.start("host") if h is not None else m.start("ident")]
        when = when.strip().decode("utf-8", "replace")
        ts = None
        note = None
        if style == "short":
            mon = month_number(g("mon"))
            if mon is None:
                note = (
                    f"month name {g('mon').decode('utf-8', 'replace')!r} not understood: "
                    "no timestamp (render with LC_ALL=C)"
                )
            else:
                ts = (mon, int(g("day")), hms_seconds(g("hms")) + frac_seconds(g("frac")))
            jfmt = "journal-short-precise" if g("frac") else "journal-short"
        elif style == "iso":
            ts = date_epoch(g("date")) + hms_seconds(g("hms")) + frac_seconds(g("frac")) - offset_seconds(g("tz"))
            jfmt = "journal-short-iso-precise" if g("frac") else "journal-short-iso"
        elif style == "full":
            off = zone_offset(g("tz"))
            if off is None:
                off = 0
                note = f"time zone {g('tz').decode('utf-8', 'replace')!r} unknown: read as UTC"
            ts = date_epoch(g("date")) + hms_seconds(g("hms")) + frac_seconds(g("frac")) - off
            if self.primary in ("journal-with-unit", "journal-short-full"):
                jfmt = self.primary
            else:
                jfmt = "journal-with-unit" if ident.endswith(_UNIT_SUFFIXES) else "journal-short-full"
        elif style == "unix":
            ts = float(g("unix"))
            jfmt = "journal-short-unix"
        else:  # mono / delta: seconds since boot, no wall clock
            jfmt = "journal-short-delta" if g("delta") else "journal-short-monotonic"
        return host, ident, pid, ts, jfmt, note, when

    # -----------------------------------------------------------------------------------
    # short* renderings show the identifier (python3), not the unit.  When systemd says
    # "Started x.service" (or "Starting") and exactly one such unit is waiting, the next
    # new process is taken to be that unit's.  Never a guess between two units.
    def _systemd_says(self, unit: str, verb: bytes | None, msg: bytes) -> None:
        if verb in (b"Started", b"Starting"):
            if unit not in self.claimed and unit not in self.waiting:
                self.waiting.append(unit)
        elif any(w in msg for w in _UNIT_GONE):
            self.claimed.pop(unit, None)
            if unit in self.waiting and (verb == b"Stopped" or b"Failed" in msg):
                self.waiting.remove(unit)

    def _unit_of(self, host, ident: str, pid: int | None) -> str | None:
        if pid is None:
            return None
        key = (host, ident, pid)
        u = self.pid_unit.get(key, _MISSING)
        if u is _MISSING:
            u = None
            if len(self.waiting) == 1:
                u = self.waiting.pop()
                self.claimed[u] = pid
            elif self.waiting:
                self.waiting.clear()  # two units starting at once: no guess
            if len(self.pid_unit) > 100_000:
                self.pid_unit.clear()
            self.pid_unit[key] = u
        return u

    def _new_boot(self) -> None:
        self.waiting.clear()
        self.claimed.clear()
        self.pid_unit.clear()

    # -----------------------------------------------------------------------------------
    def _marker(self, n: int, raw: bytes, cursor: str | None = None) -> Record:
        fmt = self.primary if self.journal else "journal"
        return Record(
            n, raw.decode("utf-8", "replace"), self.src, None, None, None, None, self.boot, cursor, True, None, fmt, []
        )

    def _try_marker(self, n: int, raw: bytes) -> Record | None:
        if raw.startswith(b"-- "):
            if raw.endswith(b" --"):
                if raw.startswith(b"-- Boot "):
                    bid = raw[8:-3]
                    if _HEX32.fullmatch(bid):
                        self.boot = bid.decode()
                        self._new_boot()
                        return self._marker(n, raw)
                if raw == b"-- Reboot --":
                    self.reboots += 1
                    self.boot = f"reboot-{self.reboots}"
                    self._new_boot()
                    return self._marker(n, raw)
                if raw.startswith((b"-- Logs begin at ", b"-- Journal begins at ", b"-- No entries --")):
                    return self._marker(n, raw)
            if raw.startswith(b"-- cursor: "):
                return self._marker(n, raw, raw[11:].decode("utf-8", "replace").strip())
            if self.journal:  # catalog text (-x, old style) and any other "-- ... --" line
                return self._marker(n, raw)
        elif raw == b"--" and self.journal:
            return self._marker(n, raw)
        return None

    # -----------------------------------------------------------------------------------
    def general(self, n: int, raw: bytes) -> Record:
        """Peel the layers of one line (see the module docstring)."""
        c = raw[:1]
        if c == b"-":
            r = self._try_marker(n, raw)
            if r is not None:
                return r
        elif c == b"H":
            if raw.startswith(b"Hint: ") and (
                self.journal or raw.startswith(b"Hint: You are currently not seeing messages")
            ):
                self.hint = True
                return self._marker(n, raw)
        elif c == b"W":
            if self.journal and raw.startswith(b"Warning: journal has been rotated"):
                return self._marker(n, raw)
        elif c == b"\xe2":
            if self.journal and raw.startswith("░░".encode()):
                return self._marker(n, raw)
        elif c == b"\xef" and raw.startswith(_BOM):
            raw = raw[3:]
            c = raw[:1]

        src = self.src
        pos = 0
        ts = host = unit = pid = boot = None
        fmt = None
        notes: list[str] = []
        header_end = -1

        # 2. compose prefix
        if self.compose:
            m = COMPOSE_RE.match(raw)
            if m is not None:
                unit = m.group("svc").decode("utf-8", "replace")
                fmt = "compose"
                pos = m.end()
                c = raw[pos : pos + 1]

        # 3. kubectl --prefix
        if c == b"[" and raw.startswith(b"[pod/", pos):
            m = KUBE_RE.match(raw, pos)
            if m is not None:
                unit = (m.group("pod") + b"/" + m.group("ctr")).decode("utf-8", "replace")
                fmt = fmt or "kubectl"
                pos = m.end()
                c = raw[pos : pos + 1]

        # 4. outer timestamp / journald header
        m = None
        style = None
        if c.isdigit():
            if raw[pos + 4 : pos + 5] == b"-" and raw[pos + 10 : pos + 11] == b"T":
                m = ISO_RE.match(raw, pos)
                if m is not None and m.group("tz") == b"Z" and not self.journal and m.group("pid") is None:
                    m = None  # "...Z INFO:  x" is docker --timestamps, not short-iso
                if m is not None:
                    style = "iso"
                else:
                    mr = RFC_RE.match(raw, pos)
                    if mr is not None:
                        ts = (
                            date_epoch(mr.group("date"))
                            + hms_seconds(mr.group("hms"))
                            + frac_seconds(mr.group("frac"))
                            - offset_seconds(mr.group("tz"))
                        )
                        fmt = fmt or ("kubectl" if self.kubectl else "docker")
                        pos = mr.end()
            elif raw[pos + 10 : pos + 11] == b"." and raw[pos : pos + 10].isdigit():
                m = UNIX_RE.match(raw, pos)
                style = "unix"
        elif c.isupper():
            if raw[pos + 4 : pos + 5].isdigit() and raw[pos + 8 : pos + 9] == b"-":
                m = FULL_RE.match(raw, pos)
                style = "full"
            else:
                m = SHORT_RE.match(raw, pos)
                style = "short"
                if m is None and raw[pos + 1 : pos + 2].islower():
                    m = LOCALE_SHORT_RE.match(raw, pos)
        elif c == b"[":
            c1 = raw[pos + 1 : pos + 2]
            if (c1 == b" " or c1.isdigit()) and raw[pos + 5 : pos + 6] != b"-":
                m = MONO_RE.match(raw, pos)
                style = "mono"
        elif c and (c[0] >= 0x80 or c.islower()) and not self.compose:
            m = LOCALE_SHORT_RE.match(raw, pos)
            style = "short"

        problem = None
        if m is not None:
            hs = m.start()
            header_end = pos = m.end()
            # the same header (same second, same process) repeats line after line
            key = raw[hs:header_end]
            info = self._hcache.get(key)
            if info is None:
                info = self._header_info(m, style)
                if len(self._hcache) > 4096:
                    self._hcache.clear()
                self._hcache[key] = info
            host, ident, pid, ts, jfmt, tnote, when = info
            if tnote is not None:
                notes.append(tnote)
            if ts.__class__ is tuple:
                self.yearless = True
            if unit is None:
                unit = ident
            boot = self.boot
            if fmt is None:
                fmt = jfmt
            if pid == 1 or ident == "systemd":
                mu = SYSTEMD_UNIT_RE.match(raw, pos)
                if mu is not None:
                    unit = mu.group("unit").decode("utf-8", "replace")
                    self._systemd_says(unit, mu.group("verb"), raw[pos:])
            elif fmt == jfmt and not ident.endswith(_UNIT_SUFFIXES):
                u = self._unit_of(host, ident, pid)
                if u is not None:
                    unit = u
                    notes.append(NOTE_UNIT_FROM_STARTED)
            if raw.endswith(b" blob data]"):
                mb = BLOB_RE.fullmatch(raw, pos)
                if mb is not None:
                    problem = (
                        f"journalctl printed '[{mb.group(1).decode()}B blob data]' instead of the "
                        f"message of {unit} at {when}: it holds control "
                        "characters or invalid UTF-8 (a tqdm progress bar, ANSI colours); rerun "
                        "journalctl with --all (-a), or use -o export"
                    )
                    self.source._problem("blob")
                    r = Record(n, None, src, ts, host, unit, pid, boot, None, False, problem, fmt, notes)
                    if hs == 0:
                        self.cont = (_spaces(header_end), r)
                    return r

        # 5. inner wrappers: Docker Desktop time, Ray actor prefix, Python logging
        for _ in range(3):
            c = raw[pos : pos + 1]
            if c == b"(" or c == b"\x1b":
                mi = RAY_RE.match(raw, pos)
                if mi is None:
                    break
                pid = int(mi.group("pid"))
                actor, ip = mi.group("actor"), mi.group("ip")
                if actor is not None or ip is not None:
                    notes.append(
                        "ray actor "
                        + (actor or b"?").decode("utf-8", "replace")
                        + (", ip=" + ip.decode("utf-8", "replace") if ip is not None else "")
                    )
                fmt = fmt or "ray"
                pos = mi.end()
                # Ray's log deduplication appends " [repeated Nx across cluster]": not SGLang's text.
                rep = RAY_REPEATED_RE.search(raw, pos)
                if rep is not None:
                    notes.append("ray: " + rep.group(0).strip().decode("utf-8", "replace"))
                    raw = raw[: rep.start()]
            elif c.isdigit() and raw[pos + 4 : pos + 5] == b"-" and raw[pos + 10 : pos + 11] == b" ":
                mi = PYLOG_RE.match(raw, pos)
                if mi is not None:
                    if ts is None:
                        ts = date_epoch(mi.group("date")) + hms_seconds(mi.group("hms")) + int(mi.group("ms")) / 1000
                        notes.append(NOTE_PYLOG_TIME)
                    fmt = fmt or "pylogging"
                    pos = mi.end()
                    continue
                mi = DESKTOP_RE.match(raw, pos)
                if mi is None:
                    break
                if ts is None:
                    ts = date_epoch(mi.group("date")) + hms_seconds(mi.group("hms")) + frac_seconds(mi.group("frac"))
                    notes.append(NOTE_DESKTOP)
                fmt = fmt or "docker-desktop"
                pos = mi.end()
            else:
                break

        # 6. free text in front of an SGLang line
        if raw[pos : pos + 1] != b"[":
            i = raw.find(b"[", pos)
            if i >= 0:
                ms = BRACKET_BYTES_RE.search(raw, i)
                if ms is not None:
                    before = raw[pos : ms.start()]
                    if b"\r" not in before and b"\x1b" not in before:
                        notes.append(
                            "text before the SGLang prefix removed: " + repr(before.decode("utf-8", "replace"))
                        )
                        pos = ms.start()

        text = raw[pos:].decode("utf-8", "replace") if pos else raw.decode("utf-8", "replace")
        r = Record(n, text, src, ts, host, unit, pid, boot, None, False, problem, fmt or self.plain_fmt, notes)
        if header_end >= 0 and m.start() == 0:
            # journalctl indents the further lines of a multi-line MESSAGE to this width
            self.cont = (_spaces(header_end), r)
        return r

    # -----------------------------------------------------------------------------------
    # journal JSON
    def _json(self, n: int, raw: bytes):
        s = raw
        fmt = "journal-json"
        if s[:1] == b"\x1e":
            s = s.lstrip(b"\x1e")
            fmt = "journal-json-seq"
        elif s.startswith(b"data: "):
            s = s[6:]
            fmt = "journal-json-sse"
        try:
            obj = json.loads(s)
        except ValueError:
            obj = None
            depth = _brace_depth(s)
            if depth > 0:  # an object over several lines (json-pretty): collect it
                self.pending = [raw]
                self.pending_text = [s]
                self.pending_start = n
                self.pending_size = len(raw)
                self.pending_depth = depth
                self.pending_fmt = "journal-json-pretty" if fmt == "journal-json" else fmt
                return None
        if not isinstance(obj, dict):
            if self.json_primary:
                self.source._problem("invalid-json")
            return self.general(n, raw)
        if self.primary == "journal-json-pretty" and fmt == "journal-json":
            fmt = "journal-json-pretty"
        return self.json_entry(n, obj, fmt)

    def _pretty_line(self, n: int, raw: bytes):
        """One more line of a multi-line JSON object; the object ends where its braces balance
        (braces inside strings do not count; a JSON string never spans lines)."""
        self.pending.append(raw)
        self.pending_text.append(raw)
        self.pending_size += len(raw) + 1
        self.pending_depth += _brace_depth(raw)
        if self.pending_depth <= 0:
            p, start = self.pending, self.pending_start
            self.pending = None
            try:
                obj = json.loads(b"\n".join(self.pending_text))
            except ValueError:
                obj = None
            self.pending_text = []
            if isinstance(obj, dict):
                return self.json_entry(start, obj, self.pending_fmt)
            self.source._problem("invalid-json")
            return [self.general(start + i, ln) for i, ln in enumerate(p)]
        if self.pending_size > MAX_PENDING_BYTES:
            return self.finish()
        return None

    def json_entry(self, n: int, obj: dict, fmt: str) -> list[Record]:
        get = obj.get
        fields = {k: _field_str(get(k)) for k in _META_KEYS if k in obj}
        msg = get("MESSAGE", _MISSING)
        if msg is _MISSING:
            values: list = []
        elif msg is None or msg.__class__ is str:
            values = [msg]
        elif isinstance(msg, list) and msg and all(isinstance(x, int) for x in msg):
            try:
                values = [bytes(msg)]
            except ValueError:
                values = [None]
        elif isinstance(msg, list):
            values = []
            for v in msg:
                if v is None or v.__class__ is str:
                    values.append(v)
                elif isinstance(v, list):
                    try:
                        values.append(bytes(v))
                    except (ValueError, TypeError):
                        values.append(None)
                else:
                    values.append(str(v))
        else:
            values = [str(msg)]
        return self.entry_records(n, fields, values, fmt)

    def entry_records(self, n: int, f: dict, values: list, fmt: str) -> list[Record]:
        """Records of one journal entry.  ``f``: metadata fields as str; ``values``: the
        MESSAGE values (str, bytes, or None when journalctl printed null / a blob)."""
        get = f.get
        host = get("_HOSTNAME")
        boot = get("_BOOT_ID")
        cursor = get("__CURSOR")
        pid = _to_int(get("_PID")) or _to_int(get("SYSLOG_PID"))
        unit = entry_unit(f)
        rt = _to_int(get("_SOURCE_REALTIME_TIMESTAMP")) or _to_int(get("__REALTIME_TIMESTAMP"))
        ts = rt / 1e6 if rt is not None else None
        if cursor is not None:
            self.source.last_cursor[(host, unit)] = cursor
        src = self.src
        if not values:  # an entry without MESSAGE (``-o cat`` prints an empty line)
            return [Record(n, "", src, ts, host, unit, pid, boot, cursor, False, None, fmt, [])]
        out = []
        for v in values:
            if v is None or v.__class__ is _Blob:
                if v is None:
                    problem = (
                        f"journalctl printed MESSAGE as null for {unit} at {fmt_utc(ts)}: fields of "
                        "4 KiB or more are dropped unless --all is given (a long server_args= line is "
                        "typical); rerun with `journalctl --all -o json` or `-o export`"
                    )
                    self.source._problem("null")
                else:
                    problem = (
                        f"journalctl printed '{v}' instead of the message of {unit} at "
                        f"{fmt_utc(ts)}: it holds control characters or invalid UTF-8; rerun "
                        "journalctl with --all (-a), or use -o export"
                    )
                    self.source._problem("blob")
                out.append(Record(n, None, src, ts, host, unit, pid, boot, cursor, False, problem, fmt, []))
                continue
            if v.__class__ is str:
                pieces = v.split("\n")
                if len(pieces) > 1 and pieces[-1] == "":
                    pieces.pop()
            else:
                bpieces = v.split(b"\n")
                if len(bpieces) > 1 and bpieces[-1] == b"":
                    bpieces.pop()
                pieces = [p.decode("utf-8", "replace") for p in bpieces]
            for text in pieces:
                out.append(Record(n, text, src, ts, host, unit, pid, boot, cursor, False, None, fmt, []))
        return out


class _Blob(str):
    """A verbose-mode ``[NB blob data]`` MESSAGE (text lost)."""


#: The journal fields the source layer reads.
_META_KEYS = (
    "__CURSOR",
    "__REALTIME_TIMESTAMP",
    "_SOURCE_REALTIME_TIMESTAMP",
    "_BOOT_ID",
    "_HOSTNAME",
    "_SYSTEMD_UNIT",
    "_SYSTEMD_USER_UNIT",
    "UNIT",
    "USER_UNIT",
    "_PID",
    "SYSLOG_PID",
    "SYSLOG_IDENTIFIER",
    "_COMM",
    "CONTAINER_NAME",
)
META_KEYS = frozenset(_META_KEYS)


def entry_unit(f: dict) -> str | None:
    """The stream a journal entry belongs to.

    systemd's own lines about a unit ("Started x.service", pid 1, ``_SYSTEMD_UNIT=init.scope``)
    carry ``UNIT=x.service``: they belong to x's stream.  Docker's journald log driver sets
    ``CONTAINER_NAME``.  Without any unit field (kernel, plain syslog) the identifier is used.
    """
    get = f.get
    u = get("UNIT") or get("USER_UNIT") or get("CONTAINER_NAME")
    if u:
        return u
    su = get("_SYSTEMD_UNIT")
    if su and su.startswith("user@") and get("_SYSTEMD_USER_UNIT"):
        return get("_SYSTEMD_USER_UNIT")
    return su or get("SYSLOG_IDENTIFIER") or get("_COMM")

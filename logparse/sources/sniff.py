"""Which format an input is, from its first bytes; and the names a user may give.

The structured renderings (json framings, export, verbose) are told by their first
line; compose by most lines matching its prefix; the other line formats by a vote of
the line parser over the first lines (each line's own outermost layer).  An input with
journalctl's markers and nothing else is ``journal-cat``; anything else is ``plain``.
The format only decides what is tried first: every line is still examined on its own.
"""

from __future__ import annotations

from collections import Counter

from logparse.sources.errors import InputError
from logparse.sources.formats import ALIASES, FORMATS, journal_json, json_logs
from logparse.sources.formats.compose import COMPOSE_RE
from logparse.sources.formats.journal_export import looks_like_export
from logparse.sources.formats.journal_verbose import VERBOSE_HDR_RE
from logparse.sources.lines import LineParser

#: Lines that are not the body of a rendering (journalctl's markers and hint).
_NOT_BODY = (b"-- ", b"Hint: ", b"      ", b"Warning: journal")
_CAT_MARKERS = (b"-- Boot ", b"-- Logs begin at", b"-- Journal begins at", b"-- No entries --")


def normalize_format(input_format: str | None) -> str | None:
    """The format name of a user's ``--input-format`` (None: sniff); InputError if unknown."""
    if input_format is None:
        return None
    f = input_format.strip().lower()
    if f in FORMATS:
        return f
    if f == "auto":
        return None
    if f in ALIASES:
        return ALIASES[f]
    raise InputError(f"unknown input format {input_format!r}; valid formats: auto, " + ", ".join(FORMATS))


def sniff_format(head: bytes, eof: bool = True) -> tuple[str, bool]:
    """(format name, CRLF line ends?) from the first bytes of an input."""
    lines = head.split(b"\n")
    crlf = len(lines) > 1 and lines[0].endswith(b"\r")
    if not eof and len(lines) > 1:
        lines.pop()  # partial last line
    if crlf:
        lines = [ln[:-1] if ln.endswith(b"\r") else ln for ln in lines]
    sample = [ln for ln in lines[:2000] if ln.strip()][:200]
    if not sample:
        return "plain", crlf
    body = [ln for ln in sample if not ln.startswith(_NOT_BODY)] or sample
    fmt = _first_structured(body) or _line_format(body[:60])
    if fmt is None:
        fmt = "journal-cat" if any(ln.startswith(_CAT_MARKERS) for ln in sample) else "plain"
    return fmt, crlf


#: Lines of debris a structured rendering may follow (a terminal's, a cut first entry's): one bad
#: line costs that line, never the file's format.
_DEBRIS_LINES = 3


def _first_structured(body: list[bytes]) -> str | None:
    """The structured format of the first line, else of a line after a little debris when the
    lines after it confirm it (a plain log may print a JSON object or a lone ``{`` of its own)."""
    for skip in range(min(_DEBRIS_LINES, len(body) - 1) + 1):
        fmt = _structured_format(body[skip:])
        if fmt is not None and (skip == 0 or _confirmed(fmt, body[skip:])):
            return fmt
    return None


def _confirmed(fmt: str, rest: list[bytes]) -> bool:
    if fmt == "journal-json-pretty":
        return len(rest) > 1 and rest[1].startswith(b'\t"')
    if fmt in ("journal-export", "journal-verbose"):  # told by several lines, or a header no log prints
        return True
    opening = rest[0][:7] if rest[0].startswith(b"data: {") else rest[0][:1]
    return 2 * sum(ln.startswith(opening) for ln in rest[:20]) > min(len(rest), 20)


def _structured_format(body: list[bytes]) -> str | None:
    """A format told by its first line: the json framings, export, verbose."""
    first = body[0]
    if first.startswith(b"\x1e"):
        return "journal-json-seq"
    if first.startswith(b"data: {"):
        return "journal-json-sse"
    if first[:1] == b"{":
        if first.strip() == b"{":
            return "journal-json-pretty"
        return json_logs.format_of(journal_json.loads(first)) or "journal-json"
    if looks_like_export(body[:6]):
        return "journal-export"
    if VERBOSE_HDR_RE.match(first):
        return "journal-verbose"
    return None


class _SniffSink:
    """Where the line parser reports while sniffing: nowhere."""

    name = "<sniff>"

    def __init__(self) -> None:
        self.last_cursor: dict = {}

    def note_problem(self, kind: str, n: int = 1) -> None:
        pass


def _line_format(body: list[bytes]) -> str | None:
    """compose when most lines carry its prefix; else the outermost layer that at least 30%
    of the lines show (None: no layer, plain text)."""
    if sum(1 for ln in body if COMPOSE_RE.match(ln)) >= 0.6 * len(body):
        return "compose"
    parser = LineParser(_SniffSink(), "plain")
    counts: Counter[str] = Counter()
    total = 0
    for i, ln in enumerate(body, 1):
        r = parser.parse(i, ln)
        for rec in r if isinstance(r, list) else [r] if r is not None else []:
            if rec.marker:
                continue
            total += 1
            if rec.fmt != "plain":
                counts[rec.fmt] += 1
    if counts and total:
        best, k = counts.most_common(1)[0]
        if k >= 0.3 * total:
            return best
    return None


#: Magic numbers of binary files a log directory holds beside its logs: (offset, bytes, what).
_BINARY_MAGIC = (
    (0, b"LPKSHHRH", "a binary systemd journal file (read it with --journal --file PATH)"),
    (0, b"\x7fELF", "an executable"),
    (0, b"\x89PNG", "a PNG image"),
    (0, b"\xff\xd8\xff", "a JPEG image"),
    (0, b"PK\x03\x04", "a zip archive"),
    (0, b"PAR1", "a Parquet file"),
    (0, b"SQLite format 3\x00", "an SQLite database"),
    (8, b"DUCK", "a DuckDB database (logparse ingest merges a store named on its own)"),
    (0, b"%PDF-", "a PDF document"),
)
#: Bytes that do not occur in text (control characters other than tab, newlines, form feed,
#: backspace and ESC).
_CONTROL = bytes(b for b in range(32) if b not in (8, 9, 10, 12, 13, 27))


def binary_kind(head: bytes) -> str | None:
    """What a binary file is (from its first bytes, decompressed), or None for text.

    Text logs may hold a few NULs or stray bytes (a crash, a terminal's debris): a file is
    binary when it has a known magic number, or when more than one byte in ten of its head is
    a control character or not UTF-8."""
    if not head:
        return None
    for offset, magic, what in _BINARY_MAGIC:
        if head[offset : offset + len(magic)] == magic:
            return what
    sample = head[:8192]
    control = len(sample) - len(sample.translate(None, _CONTROL))
    text = sample.decode("utf-8", "replace")
    bad = text.count("\ufffd") - sample.decode("utf-8", "ignore").count("\ufffd")
    return "binary data" if (control + bad) * 10 > len(sample) else None

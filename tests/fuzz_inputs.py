"""Hostile inputs made from real logs: the ways logs get damaged, and the ways attackers write them.

A *plan* is (real input, list of mutations); :func:`apply_plan` makes the mutated bytes and the set
of the original's line indexes a mutation touched (a launch none of whose lines is touched must
come out of the parse as it did from the clean log). Mutations work on lines of bytes:

* damage: line drops, duplications, truncation mid-line (of a line, of the file), byte flips,
  lines swapped or moved (interleaved ranks), rank tags changed, a line of another log spliced in;
* text: surrogates as bytes (a lone surrogate encoded with ``surrogatepass``, bare Latin-1 bytes)
  and as the ``\\udcXX`` text Python prints of a ``surrogateescape``-decoded path, control
  characters and ESC sequences, NUL, bidi overrides, line separators;
* numbers: 1e308, 1e309, 310-digit integers, 1e38, NaN, inf, negatives; Unicode digits (fullwidth,
  Arabic-Indic, Devanagari) in place of ASCII ones;
* structure: server_args nested up to 100,000 levels;
* journal headers: every field of every journalctl rendering (short-*, with-unit, verbose, export,
  json, json-pretty, json-seq): absurd times and pids, control characters, lone surrogates
  (also as JSON ``\\ud800`` escapes), fields of the wrong JSON type.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise
from pathlib import Path

from helpers import CORPUS, SAMPLES, corpus_files
from hypothesis import strategies as st

#: Real logs of both engines: the genuine corpus (when present) and the samples.
PLAIN_LOGS = [*corpus_files("*/*.log"), *sorted(SAMPLES.glob("*/*.log"))]
JOURNAL_DIR = CORPUS / "journal"
#: Every journalctl rendering of the corpus' journal (commands.txt says how each was made).
JOURNAL_RENDERINGS = [p for p in corpus_files("*/*.txt", JOURNAL_DIR) if p.name != "commands.txt"]


@cache
def real_lines(path: Path) -> tuple[bytes, ...]:
    return tuple(path.read_bytes().split(b"\n"))


def short_name(path: Path) -> str:
    for base in (CORPUS, SAMPLES):
        if path.is_relative_to(base):
            return str(path.relative_to(base))
    return path.name


# ------------------------------------------------------------------------------ hostile pieces

SURROGATE_BYTES = [b"\xed\xb3\xa9", b"\xed\xa0\x80", b"\xe9", b"\xff\xfe", b"caf\xe9"]
SURROGATE_TEXT = [b"\\udce9", b"\\ud800", b"\\udfff", b"caf\\udce9", b"\\U0010ffff\\udc80"]
CONTROL = [
    b"\x1b[31m",
    b"\x1b[2J\x1b[H",
    b"\x1b]0;owned\x07",
    b"\x1b]8;;http://x/\x1b\\",
    b"\x1bP+q\x1b\\",
    b"\x07",
    b"\x08\x08",
    b"\x7f",
    b"\x00",
    b"\r",
    b"\x0b\x0c",
    b"\xc2\x9b31m",  # C1 CSI, as UTF-8
    "\u202e".encode(),  # right-to-left override
    "\u2028".encode(),  # line separator (not a newline to the sources)
    "\ufeff".encode(),
]
HUGE_NUMBERS = [b"1e308", b"1e309", b"9" * 310, b"1e38", b"-1", b"nan", b"inf", b"-0", b"1e-320", b"4" * 25]
DIGIT_SCRIPTS = [0xFF10, 0x0660, 0x0966]  # fullwidth, Arabic-Indic, Devanagari zeros
NEST_DEPTHS = [40, 500, 5000, 100_000]

_NUMBER = re.compile(rb"(?<![\w.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])")
_QUOTED = re.compile(rb"'[^']*'|\"[^\"]*\"")
_RANK_TAG = re.compile(rb"\b(TP|DP|PP|EP)(\d+)\b")
#: Lines that carry a launch's figures (the ones worth damaging more often than noise).
_FIGURES = re.compile(
    rb"GB|GiB|#tokens|num_tokens|server_args|non-default args|blocks|KV cache|ready to roll|Uvicorn running|version"
)


@dataclass
class Mutated:
    """A mutated input: its lines (each with the index of the original line it came from, or
    None), and the original line indexes a mutation touched."""

    lines: list[tuple[int | None, bytes]]
    touched: set[int] = field(default_factory=set)
    done: list[str] = field(default_factory=list)

    def data(self) -> bytes:
        return b"\n".join(text for _, text in self.lines)

    def touch(self, i: int, around: int = 0) -> None:
        for j in range(max(0, i - around), min(len(self.lines), i + around + 1)):
            orig = self.lines[j][0]
            if orig is not None:
                self.touched.add(orig)

    def put(self, i: int, text: bytes) -> None:
        self.touch(i)
        self.lines[i] = (self.lines[i][0], text)


def _inside(line: bytes, rnd: random.Random) -> int:
    """A position inside a quoted value when the line has one (where text fields come from), else anywhere."""
    quoted = list(_QUOTED.finditer(line))
    if quoted and rnd.random() < 0.8:
        m = rnd.choice(quoted)
        return rnd.randint(m.start() + 1, max(m.start() + 1, m.end() - 1))
    return rnd.randint(0, len(line))


def _insert(m: Mutated, i: int, rnd: random.Random, pieces: list[bytes]) -> None:
    line = m.lines[i][1]
    at = _inside(line, rnd)
    m.put(i, line[:at] + rnd.choice(pieces) + line[at:])


def _replace_number(line: bytes, rnd: random.Random, new: Callable[[bytes], bytes]) -> bytes:
    found = list(_NUMBER.finditer(line))
    if not found:
        return line
    n = rnd.choice(found)
    return line[: n.start()] + new(n.group()) + line[n.end() :]


def _unicode_digits(number: bytes, rnd: random.Random) -> bytes:
    zero = rnd.choice(DIGIT_SCRIPTS)
    text = number.decode()
    return "".join(chr(zero + int(c)) if c.isdigit() and rnd.random() < 0.7 else c for c in text).encode()


def _nesting(rnd: random.Random) -> bytes:
    depth = rnd.choice(NEST_DEPTHS)
    if rnd.random() < 0.5:
        return b"fuzz_nested=" + b"[" * depth + b"1" + b"]" * depth
    return b"fuzz_nested=" + b"{'k': " * depth + b"None" + b"}" * depth


def _nest(m: Mutated, i: int, rnd: random.Random) -> None:
    """Deep nesting where a launch's arguments are (a server_args line when there is one)."""
    args = [j for j, (_, text) in enumerate(m.lines) if b"server_args=" in text or b"non-default args:" in text]
    j = rnd.choice(args) if args else i
    line = m.lines[j][1]
    end = line.rfind(b")")
    if end < 0:
        end = line.rfind(b"}")
    end = len(line) if end < 0 else end
    m.put(j, line[:end] + b", " + _nesting(rnd) + line[end:])


# ------------------------------------------------------------------------------ line mutations


def _target(m: Mutated, i: int, rnd: random.Random, wanted: re.Pattern = _FIGURES) -> int:
    """Mostly a line that matches ``wanted`` (a launch's figures), else line ``i``."""
    if rnd.random() < 0.3:
        return i
    hits = [j for j, (_, text) in enumerate(m.lines) if wanted.search(text)]
    return rnd.choice(hits) if hits else i


def _drop(m: Mutated, i: int, rnd: random.Random) -> None:
    i = _target(m, i, rnd)
    m.touch(i, around=1)
    del m.lines[i]


def _duplicate(m: Mutated, i: int, rnd: random.Random) -> None:
    i = _target(m, i, rnd)
    m.touch(i, around=1)
    m.lines.insert(i, (None, m.lines[i][1]))


def _cut_line(m: Mutated, i: int, rnd: random.Random) -> None:
    i = _target(m, i, rnd)
    line = m.lines[i][1]
    m.put(i, line[: rnd.randint(0, len(line))])


def _cut_file(m: Mutated, i: int, rnd: random.Random) -> None:
    """The file ends mid-line (a copy taken while the server wrote, a full disk)."""
    for j in range(max(0, i - 1), len(m.lines)):
        m.touch(j)
    line = m.lines[i][1]
    m.lines[i:] = [(m.lines[i][0], line[: rnd.randint(0, len(line))])]


def _flip(m: Mutated, i: int, rnd: random.Random) -> None:
    i = _target(m, i, rnd)
    line = bytearray(m.lines[i][1] or b" ")
    for _ in range(rnd.randint(1, 3)):
        line[rnd.randrange(len(line))] ^= rnd.randint(1, 255)
    m.put(i, bytes(line).replace(b"\n", b" "))


def _move(m: Mutated, i: int, rnd: random.Random) -> None:
    """A line moved a few lines on: ranks and processes interleave their lines."""
    i = _target(m, i, rnd)
    j = min(len(m.lines) - 1, i + rnd.randint(1, 6))
    for k in range(max(0, i - 1), min(len(m.lines), j + 2)):
        m.touch(k)
    m.lines.insert(j, m.lines.pop(i))


def _rank_tag(m: Mutated, i: int, rnd: random.Random) -> None:
    j = _target(m, i, rnd, _RANK_TAG)
    m.put(j, _RANK_TAG.sub(lambda t: t.group(1) + str(rnd.choice([0, 1, 7, 99999])).encode(), m.lines[j][1], count=1))


def _splice(m: Mutated, i: int, rnd: random.Random) -> None:
    """A line of another real log (perhaps the other engine's) among this one's."""
    other = real_lines(rnd.choice(PLAIN_LOGS))
    m.touch(i, around=1)
    m.lines.insert(i, (None, rnd.choice(other)))


def _number(m: Mutated, i: int, rnd: random.Random) -> None:
    j = _target(m, i, rnd)
    m.put(j, _replace_number(m.lines[j][1], rnd, lambda _: rnd.choice(HUGE_NUMBERS)))


def _digits(m: Mutated, i: int, rnd: random.Random) -> None:
    j = _target(m, i, rnd)
    m.put(j, _replace_number(m.lines[j][1], rnd, lambda n: _unicode_digits(n, rnd)))


def _text_field(m: Mutated, i: int, rnd: random.Random, pieces: list[bytes]) -> None:
    """Hostile text where it gets stored: a quoted value of the arguments line, else any line."""
    args = [j for j, (_, text) in enumerate(m.lines) if b"model_path" in text or b"model=" in text]
    _insert(m, rnd.choice(args) if args and rnd.random() < 0.7 else i, rnd, pieces)


def _noise(m: Mutated, i: int, rnd: random.Random) -> None:
    """A line of hostile noise between the log's lines (touching none of them): what a launch
    none of whose lines was touched reads as must not change."""
    pieces = CONTROL + SURROGATE_BYTES + SURROGATE_TEXT + HUGE_NUMBERS
    junk = b"".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 6)))
    junk += bytes(rnd.choice(b" !#%&()*+,-./:;<=>?@^_|~\x80\xc3\xe2") for _ in range(rnd.randint(0, 30)))
    m.touch(i - 1)  # the record it lands in, when records span lines (verbose, export, json-pretty)
    m.lines.insert(i, (None, junk.replace(b"\n", b" ").replace(b"\r", b" ")))


LINE_MUTATIONS: dict[str, Callable[[Mutated, int, random.Random], None]] = {
    "drop": _drop,
    "noise": _noise,
    "noise2": _noise,
    "duplicate": _duplicate,
    "cut_line": _cut_line,
    "cut_file": _cut_file,
    "flip": _flip,
    "move": _move,
    "rank_tag": _rank_tag,
    "splice": _splice,
    "number": _number,
    "unicode_digits": _digits,
    "nest": _nest,
    "surrogate_bytes": lambda m, i, rnd: _text_field(m, i, rnd, SURROGATE_BYTES),
    "surrogate_text": lambda m, i, rnd: _text_field(m, i, rnd, SURROGATE_TEXT),
    "control": lambda m, i, rnd: _text_field(m, i, rnd, CONTROL),
}


# ------------------------------------------------------------------------------ journal headers

_JSON_FIELD = re.compile(rb'"(?P<key>[A-Z_]+)"\s*:\s*(?P<value>"(?:[^"\\]|\\.)*"|-?\d+|null|\[[^\]]*\])')
_KV_FIELD = re.compile(rb"^(?P<indent>\s*)(?P<key>[A-Z_][A-Z0-9_]*)=(?P<value>.*)$")
_JSON_VALUES = [
    b'"99999999999999999999999999"',
    b'"-1"',
    b'""',
    b'"\\ud800"',
    b'"caf\\udce9"',
    b'"\\u001b[31mred\\u001b[0m"',
    b'"\\u0000"',
    b"4669",
    b"1e308",
    b"null",
    b"[104, 105]",
    b'{"a": 1}',
    b'"2026-13-29T08:08:05"',
]
_HEADER_VALUES = [b"13", b"32", b"25", b"61", b"0", b"00", b"9" * 25, b"-1", "１２".encode(), "٣".encode(), b""]


def _json_header(line: bytes, rnd: random.Random) -> bytes | None:
    fields = [f for f in _JSON_FIELD.finditer(line) if f.group("key") != b"MESSAGE"]
    if not fields:
        return None
    f = rnd.choice(fields)
    return line[: f.start("value")] + rnd.choice(_JSON_VALUES) + line[f.end("value") :]


def _kv_header(line: bytes, rnd: random.Random) -> bytes | None:
    """export's and verbose's ``KEY=value`` fields (not MESSAGE)."""
    f = _KV_FIELD.match(line)
    if f is None or f.group("key") == b"MESSAGE":
        return None
    value = f.group("value")
    new = _mutate_header_text(value, rnd) if value else rnd.choice(_HEADER_VALUES)
    return line[: f.start("value")] + new + line[f.end("value") :]


def _mutate_header_text(header: bytes, rnd: random.Random) -> bytes:
    """One field of a text header: a digit run made absurd, hostile text put in, a character lost."""
    op = rnd.randrange(5)  # times and pids are digits: two chances in five
    if op in (0, 4) and re.search(rb"\d+", header):
        runs = list(re.finditer(rb"\d+", header))
        r = rnd.choice(runs)
        return header[: r.start()] + rnd.choice(_HEADER_VALUES) + header[r.end() :]
    at = rnd.randint(0, len(header))
    if op == 1:
        return header[:at] + rnd.choice(CONTROL + SURROGATE_BYTES) + header[at:]
    if op == 2:
        return header[:at] + rnd.choice(SURROGATE_TEXT) + header[at:]
    return header[:at] + header[at + 1 :]


def _text_header(line: bytes, rnd: random.Random) -> bytes | None:
    """A short-* / with-unit line's header (before ``ident[pid]: ``), or verbose's entry line."""
    end = line.find(b": ")
    if end <= 0:
        if not line[:1].isalnum():
            return None
        end = len(line)
    return _mutate_header_text(line[:end], rnd) + line[end:]


def _header(m: Mutated, i: int, rnd: random.Random) -> None:
    """A journal header field damaged (the message left as it was)."""
    for j in list(range(i, len(m.lines))) + list(range(i)):
        line = m.lines[j][1]
        new = _json_header(line, rnd) or _kv_header(line, rnd) or _text_header(line, rnd)
        if new is not None:
            m.put(j, new)
            return


JOURNAL_MUTATIONS = {**LINE_MUTATIONS, "header": _header, "header2": _header, "header3": _header}


# ------------------------------------------------------------------------------ plans


@dataclass(frozen=True)
class Plan:
    path: Path
    steps: tuple[tuple[str, float, int], ...]  #: (mutation, where in the file 0..1, its own seed)

    def __repr__(self) -> str:
        return f"Plan({short_name(self.path)!r}, {list(self.steps)!r})"


def entry_starts(lines: tuple[bytes, ...]) -> list[int]:
    """Where each record of a rendering starts: one line each, except verbose (a header line, then
    indented fields), export (fields up to a blank line) and json-pretty (``{`` to ``}``)."""
    head = lines[0] if lines else b""
    if head.startswith(b"__CURSOR="):  # export
        return [0] + [i + 1 for i, line in enumerate(lines) if not line]
    if head == b"{":  # json-pretty
        return [i for i, line in enumerate(lines) if line == b"{"]
    if len(lines) > 1 and lines[1].startswith(b"    ") and b"=" in lines[1]:  # verbose
        return [i for i, line in enumerate(lines) if line[:1] not in (b" ", b"")]
    return list(range(len(lines)))


def widen(touched: set[int], lines: tuple[bytes, ...]) -> set[int]:
    """A touched line touches its whole record, and a touched ``Started X.service`` record of
    systemd touches everything up to the next one (it names the unit of the processes after it)."""
    starts = entry_starts(lines) + [len(lines)]
    out = set(touched)
    for a, b in pairwise(starts):
        if any(a <= t < b for t in touched):
            out.update(range(a, b))
    started = [a for a, b in pairwise(starts) if any(b"Started " in ln for ln in lines[a:b])]
    for k, a in enumerate(started):
        end = started[k + 1] if k + 1 < len(started) else len(lines)
        if any(a <= t < a + 30 for t in out):  # a record of systemd's is at most a few dozen lines
            out.update(range(a, end))
    return out


def apply_plan(plan: Plan) -> Mutated:
    table = JOURNAL_MUTATIONS if plan.path in JOURNAL_RENDERINGS else LINE_MUTATIONS
    original = real_lines(plan.path)
    m = Mutated(list(enumerate(original)))
    for name, where, own_seed in plan.steps:
        if not m.lines:
            break
        rnd = random.Random(own_seed)
        table[name](m, min(len(m.lines) - 1, int(where * len(m.lines))), rnd)
        m.done.append(name)
    m.touched = widen(m.touched, original)
    return m


def plans(paths: list[Path], table: dict, max_steps: int = 4) -> st.SearchStrategy[Plan]:
    step = st.tuples(st.sampled_from(sorted(table)), st.floats(0, 1, exclude_max=True), st.integers(0, 2**32))
    return st.builds(Plan, st.sampled_from(paths), st.lists(step, min_size=1, max_size=max_steps).map(tuple))


def plain_plans(max_steps: int = 4) -> st.SearchStrategy[Plan]:
    return plans(PLAIN_LOGS, LINE_MUTATIONS, max_steps)


def journal_plans(max_steps: int = 4) -> st.SearchStrategy[Plan]:
    if not JOURNAL_RENDERINGS:
        return plain_plans(max_steps)
    return plans(JOURNAL_RENDERINGS, JOURNAL_MUTATIONS, max_steps)

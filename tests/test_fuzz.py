"""Hostile input never crashes the parser, never hangs, and loses no line (property-based, hypothesis).

Each ``@fuzz`` test runs a fixed regression set, and under ``make fuzz`` a seeded random run too
(``tests/fuzzing.py``: the seed is printed in the pytest header; ``LOGPARSE_FUZZ_SEED=N`` replays a
run, ``LOGPARSE_FUZZ_EXAMPLES=N`` runs more). The read-back of fuzzed inputs through every command is
``tests/test_fuzz_readback.py``.
"""

from __future__ import annotations

import ast
import contextlib
import json
import math
import random
import re
import time
import warnings
from functools import cache
from pathlib import Path

import pytest
from fuzz_inputs import JOURNAL_RENDERINGS, PLAIN_LOGS, apply_plan, journal_plans, plain_plans
from fuzzing import TALLY, fuzz
from helpers import assert_accounted
from hypothesis import strategies as st
from readback import expect, run

from logparse.engines.sglang.line import LineParseError, parse_line
from logparse.engines.sglang.variants import VARIANTS
from logparse.grammar.classify import LineClassifier
from logparse.grammar.pyliteral import LiteralParseError, parse_literal
from logparse.pipeline import parse_sources, parse_text
from logparse.sources import FORMATS, text_source
from logparse.sources.records import Record

REAL_LINES = [v.sample for v in VARIANTS]
ANSI = ["\x1b[32m", "\x1b[0m", "\x1b[1;31m", "\x1b]0;title\x07"]


def mutate(line: str, rnd: random.Random) -> str:
    """One of the ways real lines get damaged: truncation, duplication, splicing, digit flips,
    ANSI codes, carriage returns, NULs, overlong / negative / NaN / e+ numbers."""
    op = rnd.randrange(11)
    i = rnd.randrange(len(line) + 1)
    if op == 0:
        return line[:i]
    if op == 1:
        return line + line
    if op == 2:
        other = rnd.choice(REAL_LINES)
        return line[:i] + other[rnd.randrange(len(other) + 1) :]
    if op == 3:
        return "".join(rnd.choice("0123456789") if c.isdigit() and rnd.random() < 0.3 else c for c in line)
    if op == 4:
        return line[:i] + rnd.choice(ANSI) + line[i:]
    if op == 5:
        return line[:i] + "\r" + line[i:]
    if op == 6:
        return line[:i] + "\x00" + line[i:]
    if op == 7:
        return line.replace("GB", "9" * rnd.randint(20, 400) + " GB", 1)
    if op == 8:
        return line.replace("=", "=-", 1).replace(": ", ": -", 1)
    if op == 9:
        return line.replace("1", "nan", 1).replace("2", "1e+308", 1)
    return line.replace(" ", "  ", rnd.randint(1, 3))


#: Any code point, surrogates and controls included (hypothesis' text() leaves surrogates out).
HOSTILE_CHARS = st.one_of(
    st.characters(exclude_categories=()),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    st.sampled_from(["\x1b", "\x00", "\r", "\x7f", "\x9b", "\u2028", "\u202e", "\ufeff", "１", "٣"]),
)


def lines_in(data: bytes) -> int:
    """Lines of an input as the sources count them: newline-terminated, a last one without a newline,
    a UTF-8 byte-order mark not a line."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def assert_figures_finite(result) -> None:
    """No figure of a launch is NaN or infinite (JSON has neither; the store reads them as NULL)."""
    for launch in result.launches:
        json.dumps(launch.to_dict(), allow_nan=False, default=str)


@fuzz(st.binary(max_size=3000), examples=((b"\xef\xbb\xbf",), (b"\x1f\x8b",)))
def test_random_bytes(data):
    result = parse_text(data)
    if data.startswith((b"\x1f\x8b", b"\x28\xb5\x2f\xfd")):  # gzip's, zstd's magic: read as compressed
        assert any("compressed data is corrupt or truncated" in w for w in result.warnings), result.warnings
        return
    assert_accounted(result, lines_in(data))


@fuzz(st.text(HOSTILE_CHARS, max_size=2000), examples=(("caf\udce9\n\ud800\n",),))
def test_random_unicode(text):
    """Any str through the Python API, lone surrogates too (a path decoded with surrogateescape),
    and the bytes a file holding it has (surrogatepass): every line accounted for."""
    as_bytes = text.encode("utf-8", "surrogatepass")
    for given in (text, as_bytes):
        result = parse_text(given)
        assert_accounted(result, lines_in(as_bytes))
        assert_figures_finite(result)


@fuzz(st.integers(min_value=0, max_value=2**32), st.integers(min_value=1, max_value=40))
def test_mutated_real_lines(seed, n):
    rnd = random.Random(seed)
    lines = []
    for _ in range(n):
        line = rnd.choice(REAL_LINES)
        for _ in range(rnd.randint(1, 3)):
            line = mutate(line, rnd)
        lines.append(line.replace("\n", " "))
    for line in lines:
        with contextlib.suppress(LineParseError):
            parse_line(line)
        LineClassifier().classify(Record(line_no=1, text=line))
    result = parse_text("\n".join(lines) + "\n")
    assert_accounted(result, len(lines))
    for launch in result.launches:
        for r in launch.ranks:  # nonsense is flagged, never silently trusted as negative memory
            for v in (r.avail_before_load_gb, r.avail_after_load_gb, r.avail_after_pool_gb):
                if v is not None and v < 0:
                    assert any("plausible" in w for w in launch.warnings)


# ------------------------------------------------------------------------ mutated real logs

#: Launch fields that may differ between a clean and a mutated parse of an untouched launch: its
#: line numbers (lines dropped or added before it).
MOVES_WITH_LINES = ("first_line", "last_line")


@cache
def clean_parse(path: Path) -> list[dict]:
    return [launch.to_dict() for launch in parse_text(path.read_bytes(), name="fuzzed").launches]


def comparable(launch: dict) -> dict:
    return {k: v for k, v in launch.items() if k not in MOVES_WITH_LINES}


def untouched(launches: list[dict], touched: set[int], *, context_flows: bool = False) -> list[dict]:
    """The clean launches no mutation came near: none in the lines from just before the launch's
    first line to the first line of the launch after next (a damaged first line of the next launch
    can fold that launch into this one).  The first launch also owns every line before it: a log
    without an opening line (an offline benchmark's) lets lines spliced in front join its launch.
    ``context_flows`` (a journal rendering): every launch owns every line before it, as a boot
    marker or systemd's 'Started UNIT' line decides the boot and unit of the entries after it."""
    starts = sorted((launch["first_line"] or 1) for launch in launches)
    keep = []
    for launch in launches:
        first = launch["first_line"] or 1
        later = [s for s in starts if s > first]
        end = later[1] if len(later) > 1 else math.inf
        begin = 0 if first == starts[0] or context_flows else first - 2
        if not any(begin <= t + 1 < end for t in touched):
            keep.append(launch)
    return keep


def check_mutated(plan) -> None:
    m = apply_plan(plan)
    data = m.data()
    TALLY.parsed += 1
    result = parse_text(data, name="fuzzed")
    lc = result.lines
    assert lc.parsed + lc.noise + lc.unrecognized + lc.other_units == lc.total, lc
    if plan.path not in JOURNAL_RENDERINGS:  # a journal entry may span lines (json-pretty, export)
        assert lc.total == lines_in(data), (lc, m.done)
    assert_figures_finite(result)
    ids = [launch.launch_id for launch in result.launches]
    assert len(set(ids)) == len(ids), ids
    got = [comparable(launch.to_dict()) for launch in result.launches]
    for launch in untouched(clean_parse(plan.path), m.touched, context_flows=plan.path in JOURNAL_RENDERINGS):
        assert comparable(launch) in got, f"launch at line {launch['first_line']} changed: {m.done}"


@pytest.mark.skipif(not PLAIN_LOGS, reason="no real logs")
@fuzz(plain_plans(), fixed=40, seeded=40, cost=4)
def test_mutated_real_logs(plan):
    """Real logs of both engines damaged: every line accounted for, no figure NaN or infinite, ids
    unique, and every launch the damage did not reach exactly as in the clean log."""
    check_mutated(plan)


@pytest.mark.skipif(not JOURNAL_RENDERINGS, reason="no journalctl renderings in the corpus")
@fuzz(journal_plans(), fixed=25, seeded=25, cost=6)
def test_mutated_journal_renderings(plan):
    """Every journalctl rendering with damaged header fields (times, pids, hosts, JSON types) and
    lines: a bad header costs its line, never the file."""
    check_mutated(plan)


# ------------------------------------------------------------------------ the literal grammar


@fuzz(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(HOSTILE_CHARS, max_size=20),
        lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
        max_leaves=30,
    )
)
def test_literal_grammar_round_trips_python_reprs(value):
    """Every value comes back, but a lone surrogate (no character: what is stored is valid Unicode,
    :mod:`logparse.text`) comes back as the escape Python printed for it."""
    want = _surrogates_as_printed(value)
    got = parse_literal(repr(value))
    assert got == want or repr(got) == repr(want)


def _surrogates_as_printed(value):
    if isinstance(value, str):
        return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group(0)):04x}", value)
    if isinstance(value, list):
        return [_surrogates_as_printed(v) for v in value]
    if isinstance(value, dict):
        return {_surrogates_as_printed(k): _surrogates_as_printed(v) for k, v in value.items()}
    return value


#: Escapes a damaged repr may hold: cut short (``\\x4``), beyond Unicode, named, unknown.
BAD_ESCAPES = ("'\\x'", "'\\x4'", "'\\u12'", "'\\U99999999'", "'\\N'", "'\\N{x}'", "'\\q'", "'\\'")


#: Found by exploration: a set, which the parser reads as the list written (seed 1300483907 drew
#: ``{0}``); and one whose order and repeats Python's set would lose.
SET_LITERALS = ("{0}", "{1, 0, 1}")


@fuzz(
    st.text(alphabet="()[]{}'\",:=.0123456789abcNTFeuxU \\-", max_size=300),
    examples=tuple((e,) for e in BAD_ESCAPES + SET_LITERALS),
)
def test_literal_grammar_garbage(text):
    """Garbage is refused with LiteralParseError, or read as Python reads it: a value Python's own
    ``ast.literal_eval`` gives for the same text (tuples and sets read as lists), whose repr reads back."""
    try:
        value = parse_literal(text)
    except LiteralParseError:
        return
    assert parse_literal(repr(value)) == value or repr(parse_literal(repr(value))) == repr(value)
    with (
        contextlib.suppress(ValueError, SyntaxError, TypeError, MemoryError, RecursionError),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")  # Python's own "invalid escape sequence"
        python = python_reads(text)
        assert json.dumps(value, default=repr) == json.dumps(python)


class _SetsAsLists(ast.NodeTransformer):
    def visit_Set(self, node: ast.Set) -> ast.AST:
        self.generic_visit(node)
        return ast.copy_location(ast.List(elts=node.elts, ctx=ast.Load()), node)


def python_reads(text: str):
    """``ast.literal_eval(text)``, with each set as the parser reads it: the list of its items as
    written. Python's set cannot be compared: it drops repeats and orders its items by hash."""
    ast.literal_eval(text)  # what Python refuses (a set of lists, a dict keyed by one) has no oracle
    tree = _SetsAsLists().visit(ast.parse(text.lstrip(" \t"), mode="eval"))
    return ast.literal_eval(tree.body)


@pytest.mark.parametrize("escape", BAD_ESCAPES[:-1])  # the last one escapes its closing quote
def test_a_bad_escape_in_server_args_stays_as_written(escape):
    """Found by the fuzz tests: ``'/m/x\\x'`` in server_args raised ValueError (int('', 16)) and lost
    the whole input. An escape Python would not have printed stays as the log has it."""
    path = escape[1:-1]
    text = f"[2026-10-20 08:01:00] server_args=ServerArgs(model_path='/m/{path}', tp_size=1)\n"
    (launch,) = parse_text(text + "[2026-10-20 08:01:06] The server is fired up and ready to roll!\n").launches
    assert launch.model_path == "/m/" + path and launch.tp_size == 1


def test_fifty_megabyte_single_line_is_bounded():
    line = "[2025-01-01 00:00:00] Load weight begin. avail mem=" + "7" * (50 << 20) + " GB\n"
    start = time.perf_counter()
    result = parse_text(line)
    assert time.perf_counter() - start < 60
    # cut into pieces of 4 MiB (sources.MAX_LINE), each too long for the grammar: 13 lines, all accounted
    assert_accounted(result, 13)
    assert result.lines.unrecognized == 13
    assert any("1 line longer than 4 MiB was cut into pieces of 4 MiB" in w for w in result.warnings)


def test_long_line_with_spaces_is_bounded():
    """A pathological line for backtracking regexps (long run of spaces after an anchor)."""
    line = "[2025-01-01 00:00:00] Decode batch, #running-req: 1, x: " + " " * 60000 + "y"
    start = time.perf_counter()
    LineClassifier().classify(Record(line_no=1, text=line))
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_sources_account_for_garbage_in_any_format(fmt, tmp_path):
    """Garbage forced through every input format: every line accounted for, no launch invented,
    and the command line says so in one line with exit 2."""
    rnd = random.Random(5)
    blob = (
        bytes(rnd.randrange(256) for _ in range(20000)) + b'\n{"MESSAGE": [1, 2, 300]}\n__CURSOR=x\nMESSAGE\n\xff\xff\n'
    )
    result = parse_sources([text_source(f"garbage.{fmt}", blob, input_format=fmt)])
    lc = result.lines
    assert lc.total > 0 and lc.parsed + lc.noise + lc.unrecognized + lc.other_units == lc.total, lc
    assert result.launches == []
    path = tmp_path / f"garbage.{fmt}"
    path.write_bytes(blob)
    ran = expect(run("parse", "-q", "--input-format", fmt, path), {2})
    assert len(ran.err.strip().splitlines()) == 1, ran.err

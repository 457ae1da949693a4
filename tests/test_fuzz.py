"""Hostile input never crashes the parser and never hangs (property-based, hypothesis).

The CI budget is small; set LOGPARSE_FUZZ_EXAMPLES (e.g. 5000) for a longer run.
"""

from __future__ import annotations

import contextlib
import os
import random
import time

from helpers import assert_accounted
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from logparse.grammar.classify import LineClassifier
from logparse.grammar.pyliteral import LiteralParseError, parse_literal
from logparse.grammar.sglang_line import LineParseError, parse_line
from logparse.grammar.variants import VARIANTS
from logparse.pipeline import parse_text
from logparse.sources import text_source
from logparse.sources.records import Record

EXAMPLES = int(os.environ.get("LOGPARSE_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=not os.environ.get("LOGPARSE_FUZZ_RANDOM"),
)
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


@FUZZ
@given(st.binary(max_size=3000))
@example(b"\xef\xbb\xbf")
def test_random_bytes(data):
    result = parse_text(data)
    text = data.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark is not a line
    assert_accounted(result, text.count(b"\n") + (0 if not text or text.endswith(b"\n") else 1))


@FUZZ
@given(st.text(max_size=2000))
def test_random_unicode(text):
    parse_text(text)


@FUZZ
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=1, max_value=40))
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


@FUZZ
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
        lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
        max_leaves=30,
    )
)
def test_literal_grammar_round_trips_python_reprs(value):
    assert parse_literal(repr(value)) == value or repr(parse_literal(repr(value))) == repr(value)


@FUZZ
@given(st.text(alphabet="()[]{}'\",:=.0123456789abcNTFe \\-", max_size=300))
def test_literal_grammar_garbage(text):
    with contextlib.suppress(LiteralParseError):
        parse_literal(text)


def test_fifty_megabyte_single_line_is_bounded():
    line = "[2025-01-01 00:00:00] Load weight begin. avail mem=" + "7" * (50 << 20) + " GB\n"
    start = time.perf_counter()
    result = parse_text(line)
    assert time.perf_counter() - start < 60
    assert_accounted(result, 1)
    assert result.lines.unrecognized == 1


def test_long_line_with_spaces_is_bounded():
    """A pathological line for backtracking regexps (long run of spaces after an anchor)."""
    line = "[2025-01-01 00:00:00] Decode batch, #running-req: 1, x: " + " " * 60000 + "y"
    start = time.perf_counter()
    LineClassifier().classify(Record(line_no=1, text=line))
    assert time.perf_counter() - start < 5


def test_sources_never_raise_on_garbage_in_any_format():
    from logparse.sources import FORMATS

    rnd = random.Random(5)
    blob = (
        bytes(rnd.randrange(256) for _ in range(20000)) + b'\n{"MESSAGE": [1, 2, 300]}\n__CURSOR=x\nMESSAGE\n\xff\xff\n'
    )
    for fmt in sorted(FORMATS):
        src = text_source(f"garbage.{fmt}", blob, input_format=fmt)
        from logparse.pipeline import parse_sources

        parse_sources([src])

"""The C scanner (logparse/engines/sglang/_templates.c through bulk_native) against numpy's templates
(bulk_template): on random blocks of runtime lines of every shape of grammars/sglang/runtime.toml,
uvicorn access lines, other lines and near misses of each (a byte changed, dropped or added, a
bracket with items, milliseconds, a stamp that names no time, a journal header a byte off), both
prove the same rows, positioned alike, with the same figures of the same types.

Derandomized in the gate (tests/fuzzing.py's profile); ``make fuzz`` explores with a fresh seed.
"""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from logparse.engines.sglang import bulk_native, bulk_template
from logparse.grammar import runtime_decoder

pytestmark = pytest.mark.skipif(
    not bulk_native.available() and not os.environ.get("LOGPARSE_CI"),
    reason="the C scanner is not built here (no compiler when pip installed logparse)",
)

SHAPES = runtime_decoder.shapes("sglang")
STAMPS = (
    "2026-11-29 08:10:00",
    "2026-11-29 08:10:00.123",
    "2026-02-29 08:10:00",
    "2024-02-29 23:59:59",
    "2026-13-01 00:00:00",
)
ITEMS = ("", " TP0", " DP1 TP3", " TP0 EP12", " PP0 TP1 ", " tp-0.x", " 0TP", " TP[0]")
ACCESS = (
    'INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    'INFO:     10.0.0.12:8 - "GET /health HTTP/1.1" 503 Service Unavailable',
    'INFO:     10.0.0.12:80 - "GET /get_model_info?x=1&y=%20 HTTP/1.1" 404 Not Found',
    'INFO:     1.2.3.4:123456 - "GET / HTTP/1.1" 200 OK',
    'INFO:     1.2.3.4:1 - "PATCH /' + "a" * 199 + ' HTTP/1.1" 200 OK',
    'INFO:     1.2.3.4:1 - "PATCH /' + "a" * 201 + ' HTTP/1.1" 200 OK',
)
OTHER = ("Load weight end. type=X, dtype=torch.bfloat16, avail mem=70.10 GB, mem usage=8.00 GB.", "", "x")
HEADERS = (
    "2026-11-29T08:10:00+0000 gpu-node-7 python3[40334]: ",
    "2026-11-29T08:10:00+0000 gpu-node-7 python3[4033412345]: ",
    "2026-11-29T08:10:00+0000 gpu-node-7 python3[]: ",
    "2026-11-29T25:10:00+0000 gpu-node-7 python3[1]: ",
    "2026-11-29T08:10:00+0000 gpu-node-8 python3[1]: ",
    "2026-11-29T08:10:00+0000 gpu-node-7 python3[1]:",
)


def _value(draw, field) -> str:
    if field.type == "bool":
        return draw(st.sampled_from(["True", "False", "true"]))
    # every count of digits around the 15 the templates read, and the small figures of real lines
    whole = draw(st.sampled_from(["0", "1", "3", "07"]) | st.text("0123456789", min_size=1, max_size=17))
    if field.type == "int":
        return whole
    text = whole + "." + draw(st.text("0123456789", min_size=1, max_size=16))
    return text + ("%" if field.type == "percent" else "")


@st.composite
def messages(draw) -> str:
    kind = draw(st.sampled_from(("shape", "shape", "shape", "access", "other")))
    if kind == "shape":
        shape = draw(st.sampled_from(SHAPES))
        values = [f.label + _value(draw, f) + f.unit for f in shape.fields]
        message = shape.head + shape.sep.join(values) + shape.tail
    else:
        message = draw(st.sampled_from(ACCESS if kind == "access" else OTHER))
    bracket = "[" + draw(st.sampled_from(STAMPS)) + draw(st.sampled_from(ITEMS)) + "] "
    message = bracket + message
    how = draw(st.sampled_from(("none", "none", "byte", "drop", "add")))
    if how != "none" and message:
        at = draw(st.integers(0, len(message) - 1))
        byte = draw(st.sampled_from(["x", ",", " ", "1", ".", ":", "]", "é", "\x00"]))
        message = message[:at] + ("" if how == "drop" else byte) + message[at + (how != "add") :]
    return message


def _same(a: bulk_template.Rows, b: bulk_template.Rows) -> None:
    assert a.row.tolist() == b.row.tolist()
    assert a.pos.tolist() == b.pos.tolist() and a.end.tolist() == b.end.tolist()
    assert sorted(a.cols) == sorted(b.cols)
    for k in a.cols:
        assert a.cols[k].dtype == b.cols[k].dtype, k
        assert a.cols[k].tolist() == b.cols[k].tolist(), k


def _both(data: bytes, journal: bool) -> None:
    b = bulk_template.Bytes(data)
    starts, ends = b.lines()
    if journal:
        ref = HEADERS[0].encode()[: HEADERS[0].index("[") + 1]
        rows_np = bulk_template.header_rows(b, starts, ends, ref)
        rows_c = bulk_native.header_rows(b, starts, ends, ref)
        _same(rows_np, rows_c)
    else:
        rows_np = bulk_template.Rows(np.arange(len(starts)), starts.copy(), ends, {})
        rows_c = bulk_template.Rows(np.arange(len(starts)), starts.copy(), ends, {})
    for x, y in zip(bulk_template.batch_rows(b, rows_np), bulk_native.batch_rows(b, rows_c)):
        _same(x, y)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages(), min_size=1, max_size=30))
def test_plain_blocks_are_proven_alike(drawn):
    _both("\n".join(drawn).encode("utf-8", "surrogatepass"), journal=False)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(HEADERS), messages()), min_size=1, max_size=30))
def test_journal_blocks_are_proven_alike(drawn):
    _both("\n".join(h + m for h, m in drawn).encode(), journal=True)


def test_every_sample_is_proven_by_both():
    lines = [f"[2026-11-29 08:10:00 TP0] {s.sample}" for s in SHAPES] + [f"[2026-11-29 08:10:00] {ACCESS[0]}"]
    data = "\n".join(lines).encode()
    _both(data, journal=False)
    b = bulk_template.Bytes(data)
    starts, ends = b.lines()
    decode, prefill, access = bulk_native.batch_rows(b, bulk_template.Rows(np.arange(len(starts)), starts, ends, {}))
    assert len(decode.row) + len(prefill.row) == len(SHAPES) and access.row.tolist() == [len(SHAPES)]


def test_every_field_at_the_edges_of_its_digits():
    """Each figure of each shape written with 1, 14, 15, 16 and 17 digits (a decimal's whole and
    fractional parts alike): where the 15 digits a template reads end, both draw the line alike."""
    lines = []
    for shape in SHAPES:
        for k, field in enumerate(shape.fields):
            if field.type == "bool":
                continue
            for n in (1, 14, 15, 16, 17):
                digits = "9" * n
                texts = [digits] if field.type == "int" else [digits + ".5", "1." + digits, "0." + digits]
                for text in texts:
                    values = [
                        f.label + ("1" if f.type == "int" else "True" if f.type == "bool" else "0.5") + f.unit
                        for f in shape.fields
                    ]
                    values[k] = field.label + text + ("%" if field.type == "percent" else "") + field.unit
                    lines.append("[2026-11-29 08:10:00 TP0] " + shape.head + shape.sep.join(values) + shape.tail)
    _both("\n".join(lines).encode(), journal=False)


def test_the_scanner_is_built():
    """Under .ci/run (which installs a compiler) the extension must be there: a build that fails
    would otherwise leave numpy running the templates unnoticed."""
    assert bulk_native.available(), "pip did not build logparse.engines.sglang._templates"


_NAMES = ("MESSAGE", "_PID", "PRIORITY", "_SYSTEMD_UNIT", "__CURSOR", "SYSLOG_IDENTIFIER", "MESSAGE_ID", "X", "=", "")
_NAMES += ("_HOSTNAME", "_COMM", "UNIT", "CONTAINER_NAME", "_BOOT_ID", "__REALTIME_TIMESTAMP")
_EXPORT_LINE = st.one_of(
    st.tuples(st.sampled_from(_NAMES), st.sampled_from(["=", "==", "", "\n"]), st.text("ab=1 \x00", max_size=40)).map(
        "".join
    ),
    st.tuples(st.just("_PID="), st.sampled_from(["40334", "0", "12345678901", "", "4x"])).map("".join),
    st.just("A" * 31 + "=x"),
    st.just("A" * 32 + "=x"),
    st.just("MESSAGE"),  # a binary field's name line
    st.just(""),  # the blank line that ends an entry
)


_KNOWN_LINE = st.tuples(
    st.sampled_from(["MESSAGE=", "_PID=", "__CURSOR=", "_HOSTNAME=", "_SYSTEMD_UNIT=", "_COMM=", "PRIORITY="]),
    st.sampled_from(["", "40334", "s=1;i=2", "gpu-node-7", "a=b"]),
).map("".join)
#: Entries mostly of known fields (each once, or repeated, or with one line of another kind), so
#: that both ways take some and leave others; blocks that end with or without the blank line.
_EXPORT_BLOCK = st.tuples(
    st.lists(
        st.lists(st.one_of(_KNOWN_LINE, _KNOWN_LINE, _KNOWN_LINE, _EXPORT_LINE), max_size=8), min_size=1, max_size=6
    ),
    st.sampled_from(["", "\n", "\n\n"]),
).map(lambda d: "\n\n".join("\n".join(e) for e in d[0]) + d[1])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_EXPORT_BLOCK, st.lists(_EXPORT_LINE, min_size=1, max_size=40).map("\n".join)))
@example("MESSAGE=a\n_PID=1\n_HOSTNAME=x\n\nMESSAGE=b\n_PID=2\n_HOSTNAME=x\n_HOSTNAME=y\n")  # a field twice
@example("MESSAGE=a\n_PID=1\nUNIT=u.service\n\nMESSAGE=b\n_PID=2=3\nX=1\n\n\n")  # another unit; unknown
@example("_PID=1\nMESSAGE=a\nMESSAGE=b\n\n_PID=12345678901\nMESSAGE=\n")  # MESSAGE twice; a long pid
@example("\n")
def test_export_entries_are_found_alike(text):
    """ExportBlock's entries found by the C scanner's one pass (bulk_native.export_entries) and by
    numpy: the same lines, entries, first lines, starts, takes, value spans, pids and texts."""
    from logparse.engines.sglang import bulk_export

    block = text.encode()

    def read() -> dict:
        eb = bulk_export.ExportBlock(block)
        spans = {name: [a.tolist() for a in eb.value_spans(name)] for name in bulk_export._ONCE}
        seen = (eb.n_lines, eb.entry_start.tolist(), eb.kept.tolist(), eb.rows.tolist(), eb.simple.tolist())
        return {"seen": seen, "spans": spans, "pids": eb.pids().tolist(), "texts": eb.texts(range(len(eb.kept)))}

    c = read()
    before = os.environ.get("LOGPARSE_NATIVE")
    os.environ["LOGPARSE_NATIVE"] = "0"
    try:
        assert read() == c
    finally:
        os.environ.pop("LOGPARSE_NATIVE") if before is None else os.environ.update(LOGPARSE_NATIVE=before)


_JSON_TEXT = st.one_of(
    st.text(st.sampled_from(list('ab "\\/é\t\x01]:[')), max_size=30),
    st.just("[2026-11-29 08:10:00] Decode batch, #running-req: 1"),
)


@st.composite
def json_lines(draw) -> str:
    entry: dict = {"__CURSOR": "s=1;i=2", "_HOSTNAME": draw(st.sampled_from(["gpu-node-7", "nœud"]))}
    pid = draw(st.sampled_from(["40334", "7", "", "x1", "٣", 12, "1234567890123456789"]))
    message = draw(st.one_of(_JSON_TEXT, st.sampled_from([ACCESS[0], "[2026-11-29 08:10:00] " + ACCESS[0]]), st.none()))
    if draw(st.booleans()):
        entry["_PID"] = pid
    entry["MESSAGE"] = message if message is not None else [1, 2]
    if draw(st.booleans()):
        entry["_PID"] = pid  # set again: still where it was first written
    separators = draw(st.sampled_from([(", ", ": "), (",", ":")]))
    return json.dumps(entry, ensure_ascii=draw(st.booleans()), separators=separators)


def _plain_json(line: str) -> bool:
    """Whether the scanner reads the line: MESSAGE a string with no escape but \\" \\\\ \\/, and
    _PID a string of at most 18 ASCII digits."""
    from logparse.engines.sglang.bulk_classify import JSON_MESSAGE

    entry = json.loads(line)
    pid = entry.get("_PID")
    raw = re.search(JSON_MESSAGE, line)
    plain = raw is not None and re.fullmatch(r'(?:[^\\]|\\["\\/])*', raw.group(1)) is not None
    return (
        plain
        and isinstance(entry["MESSAGE"], str)
        and isinstance(pid, str)
        and re.fullmatch("[0-9]{1,18}", pid) is not None
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(json_lines(), min_size=1, max_size=20))
def test_json_messages_are_the_decoded_strings(drawn):
    """What the C scanner takes from a JSON line is exactly its decoded MESSAGE and its _PID, on a
    line of its own; the lines it cannot read so (another escape, no string) are left to polars."""
    data = "\n".join(drawn).encode()
    b = bulk_template.Bytes(data)
    starts, ends = b.lines()
    messages, rows = bulk_native.json_rows(b, starts, ends)
    assert rows.row.tolist() == [k for k, line in enumerate(drawn) if _plain_json(line)]
    for row, pos, end, pid in zip(rows.row, rows.pos, rows.end, rows.cols["pid"]):
        entry = json.loads(drawn[row])
        assert messages.arr[pos:end].tobytes().decode() == entry["MESSAGE"]
        assert messages.arr[end] == 10
        assert str(pid) == entry["_PID"]


@st.composite
def spans(draw):
    """A block and spans of it: absent ones (-1, -1), empty ones, digits and not."""
    block = draw(st.binary(min_size=1, max_size=80).map(lambda b: b.translate(bytes(48 + c % 12 for c in range(256)))))
    n = draw(st.integers(1, 30))
    s, e = [], []
    for _ in range(n):
        if draw(st.booleans()) and draw(st.booleans()):
            s.append(-1)
            e.append(-1)
            continue
        a = draw(st.integers(0, len(block)))
        s.append(a)
        e.append(min(len(block), a + draw(st.integers(0, 12))))
    return block, np.array(s, np.int64), np.array(e, np.int64), draw(st.integers(0, n - 1))


@given(spans())
@settings(max_examples=300, deadline=None)
def test_export_pids_and_streams_are_read_alike(drawn):
    """ExportBlock's pids (span_ints) and its streams' last cursors (same_spans) in C and in numpy."""
    from logparse.engines.sglang import bulk_export

    block, s, e, k = drawn
    eb = bulk_export.ExportBlock.__new__(bulk_export.ExportBlock)
    eb.block = block
    eb.value_spans = lambda name: (s, e)
    a = np.frombuffer(block, np.uint8)
    c_pids, c_same = eb.pids(), bulk_export._same_span(block, a, s, e, k)
    before = os.environ.get("LOGPARSE_NATIVE")
    os.environ["LOGPARSE_NATIVE"] = "0"
    try:
        np_pids, np_same = eb.pids(), bulk_export._same_span(block, a, s, e, k)
    finally:
        os.environ.pop("LOGPARSE_NATIVE") if before is None else os.environ.update(LOGPARSE_NATIVE=before)
    assert c_pids.tolist() == np_pids.tolist()
    assert c_same.tolist() == np_same.tolist()

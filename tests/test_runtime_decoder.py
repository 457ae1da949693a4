"""The fast stage's runtime-line decoder (logparse/grammar/runtime_decoder.py, from each engine's
``grammars/<engine>/runtime.toml``) against the grammars: random lines of every shape and near
misses (a byte changed, a field missing, a number out of range, extra text).

* what the decoder's regexp proves, the grammar reads as the same family with the same figures
  (and a figure the decoder holds out of its bound is one the grammar's bounds set aside);
* what SGLang's numpy templates (generated from the same spec) prove, the grammar reads with the
  same four runtime figures;
* a run of such lines gives the same launches through the bulk path as through the record path
  (a line the stage does not prove goes on to the grammar).

Derandomized in the gate (tests/fuzzing.py's profile); ``make fuzz`` explores with a fresh seed.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse.engines.sglang import bulk_template
from logparse.engines.sglang import line as sglang_line
from logparse.engines.vllm import line as vllm_line
from logparse.grammar import bounds, runtime_decoder

SHAPES = runtime_decoder.shapes("sglang") + runtime_decoder.shapes("vllm")
PREFIX = {"sglang": "[2026-11-29 08:10:00 TP0] ", "vllm": "INFO 05-02 09:15:03 [loggers.py:123] "}
MUTATIONS = ("none", "none", "byte", "drop", "range", "extra")


def _grammar(shape, message: str):
    """(kind, fields) the engine's grammar reads from the line, None when it refuses it."""
    parse = sglang_line.parse_line if shape.engine == "sglang" else vllm_line.parse_line
    try:
        _, _, (kind, fields, _) = parse(PREFIX[shape.engine] + message)
    except Exception:
        return None
    return kind, fields


def _decoded(shape, message: str):
    """The decoder's reading of a message: (its regexp proves it, the values, all within bounds)."""
    full = re.fullmatch(shape.pattern(), message) is not None
    df = pl.DataFrame({"m": [message]})
    rust = df.select(pl.col("m").str.contains(f"^(?:{shape.pattern()})$"))[0, 0]
    assert full == rust, "Python's re and Rust's regex crate read the pattern alike"
    if not full:
        return False, {}, False
    values = runtime_decoder.field_exprs(pl.col("m"), shape)
    row = df.select(**values, _ok=runtime_decoder.holds_expr(values, shape)).row(0, named=True)
    return True, {k: v for k, v in row.items() if k != "_ok"}, row["_ok"]


def _value(draw, field) -> str:
    if field.type == "bool":
        return draw(st.sampled_from(["True", "False"]))
    whole = draw(st.integers(0, 2) | st.integers(0, 10**13))
    text = ("0" if draw(st.booleans()) and whole < 10 else "") + str(whole)
    if field.type == "int":
        return text
    if field.bound() is not None:  # a fraction: mostly within its bound
        text = draw(st.sampled_from(["0", "1", "00"])) if draw(st.integers(0, 9)) else text
    return text + "." + draw(st.text("0123456789", min_size=1, max_size=14))


@st.composite
def lines(draw):
    """(shape, message, mutation) of a random shape, with values, maybe one step off it."""
    shape = draw(st.sampled_from(SHAPES))
    parts = [f.label + _value(draw, f) + ("%" if f.type == "percent" else "") + f.unit for f in shape.fields]
    lead = "Engine 001: " if shape.lead else ""
    how = draw(st.sampled_from(MUTATIONS))
    if how == "drop":
        parts.pop(draw(st.integers(0, len(parts) - 1)))
    elif how == "range":
        k = draw(st.integers(0, len(parts) - 1))
        f = shape.fields[k]
        parts[k] = f.label + ("12345678901234" if f.type != "float" else "1.5") + f.unit
    message = lead + shape.head + shape.sep.join(parts) + shape.tail
    if how == "byte":
        at = draw(st.integers(0, len(message) - 1))
        message = message[:at] + draw(st.sampled_from(["x", ",", " ", "1", ".", ":", "é", "٣", ""])) + message[at + 1 :]
    elif how == "extra":
        message += draw(st.sampled_from([" ", ", #extra: 1", "x", ",", "%"]))
    return shape, message, how


def _proven_by_numpy(message: str):
    """The four figures SGLang's numpy templates read from the bracketed line, None when unproven."""
    data = (PREFIX["sglang"] + message).encode()
    b = bulk_template.Bytes(data)
    starts, ends = b.lines()
    decode, prefill, _ = bulk_template.batch_rows(b, bulk_template.Rows(np.arange(1), starts.copy(), ends, {}))
    for rows in (decode, prefill):
        if len(rows.row):
            return {k: v[0].item() for k, v in rows.cols.items() if k in ("running", "usage", "queue", "tokens")}
    return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines())
def test_the_decoder_and_the_grammar_agree(drawn):
    shape, message, _ = drawn
    proven, values, holds = _decoded(shape, message)
    if not proven:
        return  # the grammar's to read, whatever it makes of it
    read = _grammar(shape, message)
    assert read is not None, f"the decoder proves a line the grammar refuses: {message!r}"
    kind, fields = read
    assert kind == shape.family
    for name, value in values.items():  # the grammar reads every field of the spec, by its spec's labels
        assert name in fields, (name, message)
        assert fields[name] == value and type(fields[name]) is type(value), (name, message)
    notes = bounds.bound_fields({k: v for k, v in fields.items() if k in values})
    assert holds == (not notes), (message, notes)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines().filter(lambda d: d[0].engine == "sglang"))
def test_what_the_templates_prove_the_grammar_reads_alike(drawn):
    shape, message, _ = drawn
    figures = _proven_by_numpy(message)
    if figures is None:
        return
    read = _grammar(shape, message)
    assert read is not None, message
    kind, fields = read
    assert not bounds.bound_fields(fields), message
    want = {
        "running": fields.get("running_req"),
        "usage": fields.get("token_usage", fields.get("full_token_usage")),
        "queue": fields.get("queue_req"),
    }
    if kind == "decode_batch":
        want["tokens"] = fields.get("token", fields.get("full_token"))
    assert figures == want, message


def test_every_sample_is_proven_and_read_alike():
    for shape in SHAPES:
        proven, _, holds = _decoded(shape, shape.sample)
        assert proven and holds, shape.name
        assert _grammar(shape, shape.sample) is not None, shape.name
        if shape.engine == "sglang":
            assert _proven_by_numpy(shape.sample) is not None, shape.name


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines().filter(lambda d: d[0].engine == "sglang"), min_size=5, max_size=40))
def test_the_bulk_path_gives_what_the_record_path_gives(drawn):
    from helpers import SAMPLES

    from logparse.pipeline import parse_sources
    from logparse.sources import text_source

    start = (SAMPLES / "sglang-0.5/restarts-0.5.12.log").read_text().splitlines()[:60]
    text = "\n".join(
        start + [f"[2026-11-29 08:{k // 60 % 60:02d}:{k % 60:02d}] {m}" for k, (_, m, _) in enumerate(drawn)]
    )

    def summary(**kw):
        res = parse_sources([text_source("x", text, "plain")], **kw)
        return [(la.runtime, la.warnings) for la in res.launches]

    assert summary(bulk="force", block_bytes=4096) == summary(bulk=False)

"""The polars classification of a block's lines on the vectorized path.

Each line of a block (or MESSAGE of an export entry) is classified by polars expressions in one
query plan: its message inside the outer format (:func:`with_message`: plain, ``short-iso``,
``-o json``; :func:`messages` for export entries), whether it carries SGLang's prefix, is a batch
line with a real stamp, mentions a tracked anchor, needs cleaning (:func:`classified`), and so
whether it goes to the record path (a *python row*).  :func:`collect` runs the plan once: the
python rows, the counts of the vectorized rows, the runtime aggregates of the batch rows
(:mod:`.bulk_runtime`), the SGLang pids and a sample line of each.
"""

from __future__ import annotations

from functools import cache

from logparse.engines.sglang import bulk_runtime
from logparse.engines.sglang import prefix as sglang_prefix
from logparse.engines.sglang.classify import ANCHORS
from logparse.grammar import runtime_decoder
from logparse.grammar.classify import MAX_LINE
from logparse.grammar.noise import GLOG
from logparse.sources import timestamps

#: SGLang's prefix at the start of a message, run by polars (logparse.engines.sglang.prefix: the same
#: definition as the classifier's fast path and the grammar).
PREFIX_PATTERN = "^" + sglang_prefix.PREFIX
_SPECIAL = r"[\r\x1b\x00]"
#: The families of SGLang's batch lines (grammars/sglang/runtime.toml).
BATCH_FAMILIES = ("decode_batch", "prefill_batch")
#: A glog-format line (noise.GLOG) at the start of a message.
GLOG_PATTERN = "^(?:" + GLOG + ")"


def collect(lf, stamps: bool, py_columns: list[str], odd=None):
    """The python rows, the counts, the aggregates and the SGLang pids of a classified frame.

    One query plan, collected once: they share the classification.  Segment k = the batch
    rows after the k-th python row.

    A batch row with an odd figure (:func:`.bulk_runtime.batch_rows`) is the record path's to read,
    as a python row; the few blocks that hold one are collected again with those rows (``odd``:
    their ``i``) among the python rows."""
    import polars as pl

    plain = lf
    if odd is not None:
        lf = lf.with_columns(python=pl.col("python") | pl.col("i").is_in(odd))
    lf = lf.with_columns(seg=pl.col("python").cast(pl.Int64).cum_sum() - 1).cache()
    vec = ~pl.col("python")
    rows = bulk_runtime.batch_rows(lf.filter(vec & pl.col("batch"))).cache()
    out = pl.collect_all(
        [
            lf.filter(pl.col("python")).select(py_columns),
            lf.select(vec_total=vec.sum(), vec_parsed=(vec & pl.col("batch")).sum()),
            bulk_runtime.aggregate(rows),
            lf.filter(vec & pl.col("prefixed") & pl.col("pid").is_not_null()).select(pl.col("pid").unique()),
            # a row of each pid, read by the record path when no python row told its stream
            lf.filter(vec & pl.col("batch")).select("pid", *py_columns).group_by("pid").agg(pl.all().first()),
            rows.filter(pl.col("odd")).select("i"),
            bulk_runtime.histogram(rows),
            *([bulk_runtime.stamp_counts(rows)] if stamps else []),
        ]
    )
    if odd is None and len(out[5]):
        return collect(plain, stamps, py_columns, out[5]["i"].implode())
    return out[0], out[1], (out[2], out[7] if stamps else None, out[6]), out[3], out[4]


def messages(data: bytes, eb, simple):
    """MESSAGE of the entries the vectorized path takes (null elsewhere, and where it is not UTF-8:
    the record path reads those), as a polars column built from one buffer through Arrow."""
    import numpy as np
    import polars as pl
    import pyarrow as pa

    ms, me = eb.value_spans("MESSAGE")
    lens = np.where(simple, me - ms, 0)
    offsets = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    joined = b"".join([data[s:e] for s, e in zip(ms[simple].tolist(), me[simple].tolist())])
    valid = pa.py_buffer(np.packbits(simple, bitorder="little").tobytes())
    arr = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(lens), [valid, pa.py_buffer(offsets), pa.py_buffer(joined)]
    )
    return pl.Series("msg", pl.from_arrow(arr)).cast(pl.String, strict=False)


def with_message(lf, fmt: str):
    """Columns ``msg`` (SGLang's line inside the outer format) and ``pid`` (the outer pid)."""
    import polars as pl

    line = pl.col("line")
    if fmt == "plain":
        return lf.with_columns(line.alias("msg"), pl.lit(None, pl.Int64).alias("pid"))
    if fmt == "journal-json":
        return _json_message(lf)
    # "2026-10-01T00:00:00+0000 host ident[pid]: message": cut at the first "]: ",
    # check the (short) header with a regexp, take the pid from it.
    # (literal finds and slices: regexps over every line cost more than the rest together)
    # ``str.find`` gives byte offsets: the cuts are made on the bytes (``bin.slice``), so that
    # non-ASCII text before "]: " (a host, an identifier) cuts at the same place as the record path.
    cut = line.str.find("]: ", literal=True)
    opening = line.str.find("[", literal=True)
    raw = line.cast(pl.Binary)
    pid = raw.bin.slice(opening + 1, cut - opening - 1).cast(pl.String).cast(pl.Int64, strict=False)
    ok = (line.str.slice(4, 1) == "-") & (line.str.slice(10, 1) == "T") & (opening < cut) & pid.is_not_null()
    return lf.with_columns(
        pl.when(ok).then(raw.bin.slice(cut + 3).cast(pl.String)).otherwise(None).alias("msg"),
        pl.when(ok).then(pid).otherwise(None).alias("pid"),
    )


#: MESSAGE's string in a JSON entry, escapes and all (see :func:`_json_message`).
JSON_MESSAGE = r'"MESSAGE":\s*"((?:[^"\\]|\\.)*)"'


def _json_message(lf):
    """Columns ``msg`` and ``pid`` of ``-o json`` lines: MESSAGE and _PID.

    The message is only classified here (a line that needs its exact text goes to Python, which
    decodes the JSON properly), so the string is taken as it stands in the JSON, escapes and all
    (:data:`JSON_MESSAGE`: a regexp is twice as fast as a JSON path).  A MESSAGE that is not a
    string (byte array, several values, null) leaves msg null and the line goes to Python.

    Most messages hold no backslash before their closing quote: for them the string is cut with
    literal finds (at byte offsets, on the bytes), which is what the regexp gives; only the others
    (escaped quotes, say) pay for the regexp, which costs more than the rest of the block."""
    import polars as pl

    line = pl.col("line")
    raw = line.cast(pl.Binary)
    key = line.str.find('"MESSAGE":', literal=True)
    gap = pl.when(raw.bin.slice(key + 10, 1) == b'"').then(11).when(raw.bin.slice(key + 10, 2) == b' "').then(12)
    # starts right after an ASCII quote: still UTF-8
    after = raw.bin.slice(key + gap).cast(pl.String)
    quote = after.str.find('"', literal=True)
    escape = after.str.find("\\", literal=True)
    fast = (gap.is_not_null() & quote.is_not_null() & (escape.is_null() | (escape > quote))).fill_null(False)
    lf = lf.with_columns(
        pid=line.str.extract(r'"_PID":\s*"(\d+)"', 1).cast(pl.Int64, strict=False),
        fast=fast,
        msg=raw.bin.slice(key + gap, quote).cast(pl.String),
    )
    slow = lf.filter(~pl.col("fast")).with_columns(msg=line.str.extract(JSON_MESSAGE, 1))
    return pl.concat([lf.filter(pl.col("fast")), slow]).sort("i").drop("fast")


def classified(lf, fmt: str = "plain"):
    """Columns ``prefixed`` (SGLang's prefix), ``batch`` (a Decode/Prefill batch line),
    ``anchor`` (mentions something tracked), ``special`` (needs cleaning), ``glog`` (a glog-format
    line of C++ code: noise, counted here in a plain input), and ``python``: the line goes to the
    record path (the classifier, maybe the grammar).

    glog lines of a journal go to the record path: their unit may be another program's, whose
    lines are counted apart (``other_units``), which only the record path knows."""
    import polars as pl

    msg = pl.col("msg")
    head = msg.str.slice(0, 96)
    prefixed = head.str.contains(PREFIX_PATTERN)
    glog = msg.str.slice(0, 320).str.contains(GLOG_PATTERN) if fmt == "plain" else pl.lit(False)
    batch = prefixed & head.str.contains_any(["] " + runtime_decoder.family_word("sglang", k) for k in BATCH_FAMILIES])
    return lf.with_columns(
        prefixed=prefixed,
        # a batch line in a shape of the spec (grammars/sglang/runtime.toml); any other goes to the
        # record path, which reads it as the grammar does
        batch=batch & _real_stamp(head) & msg.str.contains(batch_shapes()),
        anchor=msg.str.contains_any(list(ANCHORS)),
        special=msg.str.contains(_SPECIAL) | (msg.str.len_bytes() > MAX_LINE),
        glog=glog,
    ).with_columns(
        python=(
            msg.is_null()
            | (batch & ~pl.col("batch"))  # a stamp that names no real time: the record path says so
            | pl.col("special")
            | (~pl.col("prefixed") & ~pl.col("glog"))
            | (pl.col("anchor") & ~pl.col("batch"))
        ).fill_null(True)
    )


@cache
def batch_shapes() -> str:
    """The regexp of a bracketed SGLang batch line in every shape of the spec (no capture)."""
    families = runtime_decoder.families("sglang")
    shapes = "|".join(runtime_decoder.family_pattern(families[k]) for k in BATCH_FAMILIES)
    return rf"^\[[^\]]*\] (?:{shapes})$"


#: SGLang's bracket opening with a stamp that names a real time (:data:`timestamps.REAL_STAMP`).
_REAL_STAMP_PATTERN = rf"^\[(?:{timestamps.REAL_STAMP})[. \]]"


def _real_stamp(head):
    """Whether SGLang's stamp at the start of ``head`` names a real time (month 13, Feb 30 and hour
    25 do not: :func:`logparse.sources.timestamps.civil_epoch`)."""
    return head.str.contains(_REAL_STAMP_PATTERN)

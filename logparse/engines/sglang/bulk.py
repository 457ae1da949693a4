"""Vectorized bulk path: large inputs at the speed of polars, in bounded memory.

A production log is mostly runtime lines (``Decode batch``, ``Prefill batch``, uvicorn
access lines) and other SGLang info lines; the lines that matter for launches are a few
hundred per start.  This module reads an input in blocks of a few MB, splits and
classifies each block with polars (Rust), and sends to Python only the lines that need
the grammar or the stateful classifier:

* lines that mention a tracked anchor (``sglang_classify.ANCHORS``) other than batch lines;
* lines without SGLang's prefix (tracebacks, warnings, tqdm, journal markers, ...);
* lines with control characters (``\\r``, ANSI, NUL) that need cleaning;
* lines the vectorized journal-header pattern does not match.

Batch lines are reduced to per-launch runtime aggregates with vectorized regex
extraction (the same definitions as :class:`logparse.engines.sglang.assemble.RuntimeAgg`); access
lines and other prefixed lines without an anchor are counted as noise.  Results are
identical whatever the block size (``tests/engines/sglang/test_bulk.py``).
"""

from __future__ import annotations

import dataclasses
import os
import re
from contextlib import closing
from dataclasses import dataclass
from typing import Any

from logparse.engines.sglang import bulk_export
from logparse.engines.sglang import prefix as sglang_prefix
from logparse.engines.sglang.classify import ANCHORS
from logparse.grammar import bounds
from logparse.grammar.classify import MAX_LINE
from logparse.grammar.noise import GLOG
from logparse.sources import timestamps
from logparse.sources.formats.journal_export import ExportReader
from logparse.sources.lines import LineParser
from logparse.sources.streams import gathered

#: Formats the bulk path reads; everything else goes record by record.
BULK_FORMATS = frozenset({"plain", "journal-short-iso", "journal-short-iso-precise", "journal-json", "journal-export"})
#: Default block size: bounded memory whatever the input size.
BLOCK_BYTES = 8 << 20
#: Block size of the formats :mod:`.bulk_template` reads first: numpy's gathers over a block of 4 MB
#: stay in the CPU's caches (a fifth less CPU than 8 MB, and than 2 MB, measured); polars' fixed
#: cost a block favours larger ones for the others.
TEMPLATE_BLOCK_BYTES = 4 << 20


def block_bytes_for(fmt: str) -> int:
    """The default block size of a format's bulk reading."""
    return TEMPLATE_BLOCK_BYTES if fmt in TEMPLATE_FORMATS or fmt == "journal-export" else BLOCK_BYTES


#: SGLang's prefix at the start of a message, run by polars (logparse.engines.sglang.prefix: the same
#: definition as the classifier's fast path and the grammar).
PREFIX_PATTERN = "^" + sglang_prefix.PREFIX
_SPECIAL = r"[\r\x1b\x00]"
#: A glog-format line (noise.GLOG) at the start of a message.
GLOG_PATTERN = "^(?:" + GLOG + ")"


def split_lines(data: bytes):
    """Split a block into a polars Series of lines (no newline), exactly one per ``\\n``.

    polars' CSV reader splits lines in parallel Rust code; with a separator byte that
    never occurs (0x1F) and no quoting, each line is one field.  A block holding that
    byte or a ``\\r`` (which the CSV reader would treat as a line end) is split in Python.
    """
    import io

    import polars as pl

    if b"\x1f" in data or b"\r" in data:
        return pl.Series("line", data.decode("utf-8", "replace").split("\n"), dtype=pl.String)
    df = pl.read_csv(
        io.BytesIO(data + b"\n"),
        has_header=False,
        separator="\x1f",
        quote_char=None,
        new_columns=["line"],
        schema={"line": pl.String},
        encoding="utf8-lossy",
    )
    return df.get_column("line").fill_null("")


#: Below this size the record path is faster: it does not even import polars.
MIN_BULK_BYTES = 2 << 20


def supported(src, force: bool = False) -> bool:
    """Whether the bulk path reads this source (a large plain/short-iso/json input).

    Inputs of unknown size (stdin, journalctl) take it as well: they may be huge."""
    try:
        size = getattr(src, "size", None)
        if size is not None and size < MIN_BULK_BYTES and not force:
            return False
        return src.fmt in BULK_FORMATS and callable(getattr(src, "open_content", None))
    except Exception:  # a source that cannot even sniff: let the record path report it
        return False


@dataclass(slots=True)
class BlockResult:
    """What a block of lines reduces to (picklable: it comes back from a worker process)."""

    n: int
    vec_total: int
    vec_parsed: int
    py_rows: list
    py_lines: list
    aggs: dict
    #: pids of the SGLang lines counted here (journal formats): their units are SGLang's
    sglang_pids: list = dataclasses.field(default_factory=list)
    #: the first line (row) of each python row when rows are not lines (export entries)
    py_line_rows: list | None = None
    #: ``(row, (host, unit), __CURSOR)``: where each stream's cursor is after the vectorized rows (export)
    cursors: list = dataclasses.field(default_factory=list)
    #: rows of the block when they are not its lines (export: entries)
    rows: int | None = None
    #: ``{pid: a batch line (str) or entry (bytes) of it}``: its stream when no python row told it
    samples: dict = dataclasses.field(default_factory=dict)


def _workers_for(size: int, block_bytes: int, fmt: str = "plain") -> int:
    """Worker processes for an input: 1 (this process) unless LOGPARSE_WORKERS says otherwise.

    Measured on 2 cores (bench/run): polars already spreads a block's expressions over the
    cores and a reader thread overlaps I/O and hashing with them, so worker processes only
    add pickling and contention (1 GB short-iso 8.9 s in-process vs 10.5 s with 2 workers;
    3 GB json 19 s vs 27 s).  Kept for machines with many cores."""
    env = os.environ.get("LOGPARSE_WORKERS")
    if env is not None:
        try:
            return max(int(env), 1)
        except ValueError:
            return 1
    return 1


def _threads() -> int:
    """Blocks classified at once in threads of this process (LOGPARSE_THREADS; default 1: on the
    shared 2-core machine of bench/run two threads gave the same wall time for more CPU and memory,
    numpy's many short steps contending for the GIL)."""
    try:
        return max(int(os.environ.get("LOGPARSE_THREADS", "1")), 1)
    except ValueError:
        return 1


def classify_block(data: bytes, fmt: str, crlf: bool, stamps: bool = False) -> BlockResult:
    """Split and classify one block; reduce batch lines to aggregates.  Pure: runs anywhere.

    ``stamps``: also count the batch lines of each stamp (the store merges overlapping
    journal windows exactly with them)."""
    import polars as pl

    if fmt == "journal-export":
        return _classify_export(data, stamps)
    if not crlf and fmt in TEMPLATE_FORMATS:
        proven = _classify_proven(data, fmt, stamps)
        if proven is not None:
            return proven
    lines = split_lines(data)
    if crlf:
        lines = lines.str.strip_suffix("\r")
    lf = pl.DataFrame({"line": lines}).with_row_index("i").lazy()
    py, counts, agg, pids, samples = _collect(_classified(_with_message(lf, fmt), fmt), stamps, ["i", "line"])
    return BlockResult(
        len(lines),
        int(counts["vec_total"][0] or 0),
        int(counts["vec_parsed"][0] or 0),
        py["i"].to_list(),
        py["line"].to_list(),
        _aggregates_by_segment(agg),
        pids["pid"].to_list() if fmt != "plain" else [],
        samples={pid: line for pid, _, line in samples.iter_rows()} if fmt != "plain" else {},
    )


#: Formats whose blocks are first read by :mod:`.bulk_template` (the batch lines it proves skip polars).
TEMPLATE_FORMATS = frozenset({"plain", "journal-short-iso", "journal-short-iso-precise"})
#: Up to this many rows the templates leave in a block go to the record path as they are (a
#: polars query has a fixed cost of tens of ms a block, the record path ~20 µs a line).
RECORD_PATH_ROWS = 1000
#: A ``short-iso`` header as :mod:`.bulk_template` takes it for the block's reference: ASCII,
#: ``host ident[`` without another bracket (polars cuts at the first ``[`` and ``]: ``).
_REFERENCE_RE = re.compile(rb"\d{4}-\d\d-\d\dT[0-9:.+-]+ [\x20-\x5a\x5c\x5e-\x7e]*\[")


def _classify_proven(data: bytes, fmt: str, stamps: bool) -> BlockResult | None:
    """:func:`classify_block` with the batch lines :mod:`.bulk_template` proves read by numpy and
    only the others classified by polars; None when no row of the block can be proven."""
    import numpy as np

    from logparse.engines.sglang import bulk_template

    b = bulk_template.Bytes(data)
    starts, ends = b.lines()
    rows = _message_rows(b, data, starts, ends, fmt)
    if rows is None:
        return None
    decode, prefill, access = bulk_template.batch_rows(b, rows)
    if not len(decode.row) and not len(prefill.row):
        return None
    proven = np.zeros(len(starts), bool)
    for r in (decode, prefill, access):
        proven[r.row] = True
    rest = np.flatnonzero(~proven)
    if len(rest) <= RECORD_PATH_ROWS:
        # a few rows: the record path reads them all (as it reads any line), no polars query
        py_rows, py_lines = rest.tolist(), [data[s:e] for s, e in zip(starts[rest].tolist(), ends[rest].tolist())]
        counts, agg, pids, samples = None, None, None, None
    else:
        py, counts, agg, pids, samples = _collect_rest(data, starts, ends, rest, fmt, stamps)
        py_rows, py_lines = py["i"].to_list(), py["line"].to_list()
    rest_samples = {pid: (i, line) for pid, i, line in samples.iter_rows()} if samples is not None else None
    vec_total, vec_parsed, aggs, pid_list, first = _with_proven(
        (decode, prefill, access), py_rows, (counts, agg, pids, rest_samples), fmt != "plain", stamps, b
    )
    return BlockResult(
        len(starts),
        vec_total,
        vec_parsed,
        py_rows,
        py_lines,
        aggs,
        pid_list,
        samples={pid: data[starts[i] : ends[i]].decode("ascii") if v is None else v for pid, (i, v) in first.items()}
        if fmt != "plain"
        else {},
    )


def _with_proven(proven, py_rows: list, rest, with_pid: bool, stamps: bool, b):
    """What a block adds up to, its proven rows (``(decode, prefill, access)``) and the rows polars
    classified (``rest``: :func:`_collect`'s counts, aggregates, pids and ``{pid: (row, sample)}``,
    all None when the record path reads them): the vectorized rows' counts, the aggregates by
    segment, the SGLang pids, and ``{pid: (row, sample or None)}`` (None: the proven row's own)."""
    import numpy as np

    decode, prefill, access = proven
    counts, agg, pids, samples = rest
    python_rows = np.asarray(py_rows, dtype=np.int64)
    one = _one_group(decode, prefill, python_rows, with_pid, stamps, b) if agg is None else None
    n_batch = len(decode.row) + len(prefill.row)
    pid_set = set(pids["pid"].to_list()) if pids is not None else set()
    for r in (decode, prefill, access):
        pid_set |= set(np.unique(r.cols["pid"]).tolist()) if with_pid else set()
    if one is not None:
        aggs, first = one[0], {pid: (i, None) for pid, i in one[1].items()}
    else:
        frame = _proven_frame(decode, prefill, python_rows, with_pid)
        aggs = _aggregates_by_segment(_merged_aggregates(agg, frame, stamps))
        first = _merged_samples(samples or {}, frame)
    return (
        (int(counts["vec_total"][0] or 0) if counts is not None else 0) + n_batch + len(access.row),
        (int(counts["vec_parsed"][0] or 0) if counts is not None else 0) + n_batch,
        aggs,
        sorted(pid_set) if with_pid else [],
        first,
    )


def _one_group(decode, prefill, python_rows, with_pid: bool, stamps: bool, b=None):
    """The aggregates of the proven rows, and the first row of their pid, when they are all one
    (segment, pid), the usual block, read by numpy: ``({seg: [(pid, aggregate)]}, {pid: row})``;
    None otherwise."""
    import numpy as np

    from logparse.engines.sglang import bulk_template

    parts = [r for r in (decode, prefill) if len(r.row)]
    rows = np.concatenate([r.row for r in parts])
    lo, hi = int(rows.min()), int(rows.max())
    seg = np.searchsorted(python_rows, [lo, hi], side="right") - 1
    pid = np.concatenate([r.cols["pid"] for r in parts]) if with_pid else None
    if seg[0] != seg[1] or (pid is not None and pid.min() != pid.max()):
        return None
    ts = np.concatenate([r.cols["ts"] for r in parts])
    agg = {
        "batch_lines": len(rows),
        "peak_running_req": max(int(r.cols["running"].max()) for r in parts),
        "peak_token_usage": max(float(r.cols["usage"].max()) for r in parts),
        "peak_queue_req": max(int(r.cols["queue"].max()) for r in parts),
        "peak_tokens": int(decode.cols["tokens"].max()) if len(decode.row) else None,
        "first_runtime_at": bulk_template.stamp_text(int(ts.min())),
        "last_runtime_at": bulk_template.stamp_text(int(ts.max())),
    }
    if stamps:
        agg["stamps"] = _stamp_frame(ts, [r.cols["ts_at"] for r in parts], b)
    key = int(pid[0]) if pid is not None else None
    return {int(seg[0]): [(key, agg)]}, {key: lo}


def _stamp_frame(ts, at: list, b):
    """The ISO stamp of each row (:func:`_stamp_counts`' frame): copied from the block when all have
    one width (an Arrow array over one buffer), else written from :mod:`.bulk_template`'s stamp
    numbers, each distinct one once."""
    import numpy as np
    import polars as pl
    import pyarrow as pa

    from logparse.engines.sglang import bulk_template

    milli = ts % 10000 > 0
    if not milli.any() or milli.all():
        width = 23 if milli.any() else 19
        buf = bulk_template.stamp_texts(b, np.concatenate(at), width)
        offsets = np.arange(len(ts) + 1, dtype=np.int64) * width
        arr = pa.LargeStringArray.from_buffers(len(ts), pa.py_buffer(offsets), pa.py_buffer(buf))
        return pl.DataFrame({"ts": pl.from_arrow(arr)})
    distinct, which = np.unique(ts, return_inverse=True)
    texts = pl.DataFrame({"c": distinct}).select(_stamp_text(pl.col("c"), "T")).to_series()
    return pl.DataFrame({"ts": texts.gather(which.ravel())})


def _message_rows(b, data: bytes, starts, ends, fmt: str):
    """The rows whose message :mod:`.bulk_template` may read, positioned at it (None: none)."""
    import numpy as np

    from logparse.engines.sglang import bulk_template

    if fmt == "plain":
        return bulk_template.Rows(np.arange(len(starts)), starts.copy(), ends, {})
    head = data[: ends[min(len(ends) - 1, 64)]]
    m = _REFERENCE_RE.search(head)
    while m is not None and m.start() and head[m.start() - 1] != 10:
        m = _REFERENCE_RE.search(head, m.start() + 1)
    if m is None or m.group(0)[4:5] != b"-" or m.group(0)[10:11] != b"T":
        return None
    return bulk_template.header_rows(b, starts, ends, m.group(0))


def _collect_rest(data: bytes, starts, ends, rest, fmt: str, stamps: bool):
    """:func:`_collect` of the rows the templates did not prove (``rest``: their row numbers)."""
    import numpy as np
    import polars as pl

    # runs of consecutive rows: one slice each
    breaks = np.flatnonzero(np.diff(rest) != 1) + 1
    firsts = rest[np.concatenate(([0], breaks))] if len(rest) else rest
    lasts = rest[np.concatenate((breaks - 1, [len(rest) - 1]))] if len(rest) else rest
    joined = b"\n".join([data[s:e] for s, e in zip(starts[firsts].tolist(), ends[lasts].tolist())])
    lines = split_lines(joined) if len(rest) else pl.Series("line", [], dtype=pl.String)
    lf = pl.DataFrame({"i": rest, "line": lines}).lazy()
    return _collect(_classified(_with_message(lf, fmt), fmt), stamps, ["i", "line"])


def _proven_frame(decode, prefill, python_rows, with_pid: bool):
    """The proven batch rows as one frame: row ``i``, ``seg`` (the python rows before it), ``pid``,
    the four figures and ``ts`` (:mod:`.bulk_template`'s number)."""
    import numpy as np
    import polars as pl

    parts = []
    for rows, decoding in ((decode, True), (prefill, False)):
        c = rows.cols
        n = len(rows.row)
        if not n:
            continue
        parts.append(
            pl.DataFrame(
                {
                    "i": rows.row,
                    "seg": np.searchsorted(python_rows, rows.row, side="right") - 1,
                    "pid": pl.Series(c["pid"] if with_pid else [None] * n, dtype=pl.Int64),
                    "running": c["running"],
                    "usage": c["usage"],
                    "queue": c["queue"],
                    "tokens": pl.Series(c["tokens"] if decoding else [None] * n, dtype=pl.Int64),
                    "ts": c["ts"],
                }
            )
        )
    return pl.concat(parts)


def _stamp_text(code, sep: str):
    """:mod:`.bulk_template`'s stamp number as SGLang wrote it (``sep`` between date and time)."""
    import polars as pl

    d = (code // 10000).cast(pl.String).str.zfill(14)
    frac = code % 10000
    return pl.concat_str(
        d.str.slice(0, 4),
        pl.lit("-"),
        d.str.slice(4, 2),
        pl.lit("-"),
        d.str.slice(6, 2),
        pl.lit(sep),
        d.str.slice(8, 2),
        pl.lit(":"),
        d.str.slice(10, 2),
        pl.lit(":"),
        d.str.slice(12, 2),
        pl.when(frac > 0).then(pl.lit(".") + (frac - 1000).cast(pl.String).str.zfill(3)).otherwise(pl.lit("")),
    )


def _merged_aggregates(agg, frame, stamps: bool):
    """The aggregates (and stamps) of the polars rows and the proven rows together."""
    import polars as pl

    rest, rest_stamps = agg if agg is not None else (None, None)
    ts = pl.col("ts")
    mine = frame.group_by("seg", "pid").agg(
        pl.len().alias("batch_lines"),
        pl.col("running").max().alias("peak_running_req"),
        pl.col("usage").max().alias("peak_token_usage"),
        pl.col("queue").max().alias("peak_queue_req"),
        pl.col("tokens").max().alias("peak_tokens"),
        _stamp_text(ts.min(), " ").alias("first_runtime_at"),
        _stamp_text(ts.max(), " ").alias("last_runtime_at"),
    )
    mine_stamps = frame.select("seg", "pid", _stamp_text(ts, "T").alias("ts")) if stamps else None
    if rest is None:
        return mine, mine_stamps
    both = (
        pl.concat([rest, mine.cast(rest.schema)])
        .group_by("seg", "pid")
        .agg(
            pl.col("batch_lines").sum(),
            *(pl.col(k).max() for k in ("peak_running_req", "peak_token_usage", "peak_queue_req", "peak_tokens")),
            pl.col("first_runtime_at").min(),
            pl.col("last_runtime_at").max(),
        )
    )
    if mine_stamps is None or rest_stamps is None:
        return both, None
    return both, pl.concat([rest_stamps, mine_stamps.cast(rest_stamps.schema)])


def _merged_samples(first: dict, frame) -> dict:
    """``{pid: (row, sample)}`` of each pid's first batch row, the polars rows' (``first``) and the
    proven rows' (``frame``, sample None: the caller reads it) together."""
    import polars as pl

    first = dict(first)
    for pid, i in frame.group_by("pid").agg(pl.col("i").min()).iter_rows():
        if pid not in first or i < first[pid][0]:
            first[pid] = (i, None)
    return first


def _collect(lf, stamps: bool, py_columns: list[str], odd=None):
    """The python rows, the counts, the aggregates and the SGLang pids of a classified frame.

    One query plan, collected once: they share the classification.  Segment k = the batch
    rows after the k-th python row.

    A batch row with an odd figure (:func:`_batch_fields`) is the record path's to read, as a
    python row; the few blocks that hold one are collected again with those rows (``odd``: their
    ``i``) among the python rows."""
    import polars as pl

    plain = lf
    if odd is not None:
        lf = lf.with_columns(python=pl.col("python") | pl.col("i").is_in(odd))
    lf = lf.with_columns(seg=pl.col("python").cast(pl.Int64).cum_sum() - 1).cache()
    vec = ~pl.col("python")
    rows = _batch_rows(lf.filter(vec & pl.col("batch"))).cache()
    out = pl.collect_all(
        [
            lf.filter(pl.col("python")).select(py_columns),
            lf.select(vec_total=vec.sum(), vec_parsed=(vec & pl.col("batch")).sum()),
            _aggregate(rows),
            lf.filter(vec & pl.col("prefixed") & pl.col("pid").is_not_null()).select(pl.col("pid").unique()),
            # a row of each pid, read by the record path when no python row told its stream
            lf.filter(vec & pl.col("batch")).select("pid", *py_columns).group_by("pid").agg(pl.all().first()),
            rows.filter(pl.col("odd")).select("i"),
            *([_stamp_counts(rows)] if stamps else []),
        ]
    )
    if odd is None and len(out[5]):
        return _collect(plain, stamps, py_columns, out[5]["i"].implode())
    return out[0], out[1], (out[2], out[6] if stamps else None), out[3], out[4]


def _classify_export(data: bytes, stamps: bool) -> BlockResult:
    """:func:`classify_block` of a block of whole export entries (:mod:`.bulk_export`): its rows
    are entries; python rows are their bytes, read by the record path."""
    import numpy as np
    import polars as pl

    eb = bulk_export.ExportBlock(data)
    pid = eb.pids()
    simple = eb.simple & (pid > 0)
    n = len(simple)
    if TEMPLATE_EXPORT:
        proven = _classify_export_proven(data, eb, pid, simple, stamps)
        if proven is not None:
            return proven
    frame = pl.DataFrame(
        {
            "i": np.arange(n),
            "msg": _messages(data, eb, simple),
            "pid": pl.Series(np.where(simple, pid, 0)).replace(0, None),
        }
    )
    py, counts, agg, pids, samples = _collect(_classified(frame.lazy(), "journal-export"), stamps, ["i"])
    py_rows = py["i"].to_list()
    vec = np.ones(n, dtype=bool)
    vec[py_rows] = False
    return BlockResult(
        eb.n_lines,
        int(counts["vec_total"][0] or 0),
        int(counts["vec_parsed"][0] or 0),
        py_rows,
        eb.texts(py_rows),
        _aggregates_by_segment(agg),
        pids["pid"].to_list(),
        eb.rows[py_rows].tolist(),
        eb.last_cursors(vec),
        n,
        {pid: text for (pid, _), text in zip(samples.iter_rows(), eb.texts(samples["i"].to_list()))},
    )


#: Whether the MESSAGE of export entries is first read by :mod:`.bulk_template`.
TEMPLATE_EXPORT = True


def _classify_export_proven(data: bytes, eb, pid, simple, stamps: bool) -> BlockResult | None:
    """:func:`_classify_export` with the entries whose MESSAGE :mod:`.bulk_template` proves read by
    numpy, the others by polars (or by the record path when few); None when none is proven."""
    import numpy as np
    import polars as pl

    from logparse.engines.sglang import bulk_template

    ms, me = eb.value_spans("MESSAGE")
    entries = np.flatnonzero(simple)
    b = bulk_template.Bytes(data)
    rows = bulk_template.Rows(entries, ms[entries], me[entries], {"pid": pid[entries]})
    decode, prefill, access = bulk_template.batch_rows(b, rows)
    if not len(decode.row) and not len(prefill.row):
        return None
    n = len(simple)
    proven = np.zeros(n, bool)
    for r in (decode, prefill, access):
        proven[r.row] = True
    rest = np.flatnonzero(~proven)
    if len(rest) <= RECORD_PATH_ROWS:
        py_rows, counts, agg, pids, samples = rest.tolist(), None, None, None, None
    else:
        frame = pl.DataFrame(
            {"i": rest, "msg": _messages(data, eb, simple)[rest], "pid": pl.Series(np.where(simple, pid, 0)[rest])}
        ).with_columns(pl.col("pid").replace(0, None))
        py, counts, agg, pids, samples = _collect(_classified(frame.lazy(), "journal-export"), stamps, ["i"])
        py_rows = py["i"].to_list()
        samples = {p: (i, None) for p, i in samples.iter_rows()}
    vec_total, vec_parsed, aggs, pid_list, first = _with_proven(
        (decode, prefill, access), py_rows, (counts, agg, pids, samples), True, stamps, b
    )
    vec = np.ones(n, dtype=bool)
    vec[py_rows] = False
    sample_rows = [i for i, _ in first.values()]
    return BlockResult(
        eb.n_lines,
        vec_total,
        vec_parsed,
        py_rows,
        eb.texts(py_rows),
        aggs,
        pid_list,
        eb.rows[py_rows].tolist(),
        eb.last_cursors(vec),
        n,
        dict(zip(first, eb.texts(sample_rows))),
    )


def _messages(data: bytes, eb, simple):
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


def _with_message(lf, fmt: str):
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


def _classified(lf, fmt: str = "plain"):
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
    batch = prefixed & head.str.contains_any(["] Decode batch", "] Prefill batch"])
    return lf.with_columns(
        prefixed=prefixed,
        batch=batch & _real_stamp(head),
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


#: SGLang's bracket opening with a stamp that names a real time (:data:`timestamps.REAL_STAMP`).
_REAL_STAMP_PATTERN = rf"^\[(?:{timestamps.REAL_STAMP})[. \]]"


def _real_stamp(head):
    """Whether SGLang's stamp at the start of ``head`` names a real time (month 13, Feb 30 and hour
    25 do not: :func:`logparse.sources.timestamps.civil_epoch`)."""
    return head.str.contains(_REAL_STAMP_PATTERN)


def _aggregates_by_segment(agg) -> dict[int, list[tuple[Any, dict]]]:
    """``{segment: [(pid, aggregate), ...]}`` with ISO times; with stamps counted
    (:func:`_stamp_counts`), each aggregate's ``stamps`` is its frame of ``ts``, one row a line."""
    agg, stamps = agg
    parts = stamps.partition_by("seg", "pid", as_dict=True, include_key=False) if stamps is not None else None
    aggs: dict[int, list[tuple[Any, dict]]] = {}
    for row in agg.iter_rows(named=True):
        for k in ("first_runtime_at", "last_runtime_at"):
            if row[k]:
                row[k] = row[k].replace(" ", "T", 1)
        if parts is not None:
            row["stamps"] = parts[(row["seg"], row["pid"])]
        aggs.setdefault(row.pop("seg"), []).append((row.pop("pid"), row))
    return aggs


def _stamp_counts(rows):
    """The ISO stamp of each batch row, by segment and pid: kept as frames, one row a line (a
    journal has a stamp every second or so, too many for Python dicts; counting them is left
    to the few questions asked of them, :class:`logparse.store.runtime.StampFrame`)."""
    import polars as pl

    return rows.select("seg", "pid", pl.col("ts").str.replace(" ", "T", literal=True))


def _batch_rows(batch):
    """The stamp and the fields of the batch rows (a lazy frame)."""
    import polars as pl

    # The fields are cut at byte offsets (``str.find``) with a character slice: right on ASCII
    # text only.  The few batch lines with other characters (a word in the bracket, say) are
    # cut after the key itself (``splitn``), exactly and more slowly.
    ascii_only = pl.col("msg").str.len_bytes() == pl.col("msg").str.len_chars()
    return pl.concat(
        [
            _batch_fields(batch.filter(ascii_only), _field),
            _batch_fields(batch.filter(~ascii_only), _field_exact, foreign=True),
        ]
    )


def _aggregate(rows):
    """Runtime aggregates per (segment, pid) of the batch rows (:func:`_batch_rows`)."""
    import polars as pl

    return rows.group_by("seg", "pid").agg(
        pl.len().alias("batch_lines"),
        pl.col("running").max().alias("peak_running_req"),
        pl.col("usage").max().alias("peak_token_usage"),
        pl.col("queue").max().alias("peak_queue_req"),
        pl.col("tokens").max().alias("peak_tokens"),
        pl.col("ts").min().alias("first_runtime_at"),
        pl.col("ts").max().alias("last_runtime_at"),
    )


#: The field (:data:`logparse.grammar.bounds.BATCH_FIELDS`) of each figure column.
_FIGURE_FIELDS = {"running": "running_req", "usage": "token_usage", "queue": "queue_req", "tokens": "token"}


def _batch_fields(batch, field, foreign: bool = False):
    """The stamp and the four fields of batch rows (a lazy frame), cut by ``field``; ``odd``: a
    figure that is no ASCII number within its bound (:data:`logparse.grammar.bounds.BATCH_FIELDS`),
    or (``foreign``: rows that are not ASCII) digits of another script.  The record path reads
    such a row (:func:`_collect`), warning and all, as it does whichever path reads the input."""
    import polars as pl

    msg = pl.col("msg")
    decode = msg.str.contains("] Decode batch", literal=True)
    texts = {
        "running": field(msg, "#running-req: "),
        "usage": field(msg, "token usage: "),
        "queue": field(msg, "#queue-req: "),
        "tokens": pl.when(decode).then(pl.coalesce(field(msg, "#token: "), field(msg, "#full token: "))),
    }
    batch = batch.with_columns(**{"_" + k: t for k, t in texts.items()})  # each cut once, read twice
    values = {k: pl.col("_" + k).cast(pl.Float64 if k == "usage" else pl.Int64, strict=False) for k in texts}
    odd = msg.str.contains(bounds.FOREIGN_DIGIT_PATTERN) if foreign else pl.lit(False)
    for k in texts:
        bound = bounds.BATCH_FIELDS[_FIGURE_FIELDS[k]]
        odd = odd | (pl.col("_" + k).is_not_null() & ~values[k].is_between(bound.lo, bound.hi).fill_null(False))
    return batch.select(
        "i",
        "pid",
        "seg",
        # SGLang's stamp is fixed-width: "[YYYY-mm-dd HH:MM:SS" (+ ".mmm" with SGLANG_LOG_MS);
        # kept with its space (same order as the ISO form) and turned into ISO after the min/max.
        ts=pl.when(msg.str.slice(5, 1) != "-")
        .then(None)
        .when(msg.str.slice(20, 1) == ".")
        .then(msg.str.slice(1, 23))
        .otherwise(msg.str.slice(1, 19)),
        **values,
        odd=odd.fill_null(False),
    )


def _field(msg, key: str):
    """The text after ``key`` up to the next comma (``#running-req: 12, …`` -> ``12``).

    Literal finds and short slices (ASCII text: byte offsets are character offsets): several
    times faster in polars than a regexp with a capture group over the whole line, and twice as
    fast as splitting the slice at its comma."""
    pos = msg.str.find(key, literal=True)
    after = msg.str.slice(pos + len(key), 24)
    return after.str.slice(0, after.str.find(",", literal=True).fill_null(24)).str.strip_chars()


def _field_exact(msg, key: str):
    """:func:`_field` for any text: the value is cut after the key itself, not at an offset."""
    after = msg.str.splitn(key, 2).struct.field("field_1")
    return after.str.slice(0, 24).str.split_exact(",", 1).struct.field("field_0").str.strip_chars()


def _prefetch(blocks, depth: int = 2):
    """Read (and hash) the next blocks in a thread while the current one is classified.

    File reads and SHA-256 release the GIL, and so does polars: the two overlap.  At most
    ``depth`` blocks wait in the queue (bounded memory); an error in the reader is raised
    here, in the consumer."""
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def reader() -> None:
        try:
            for block in blocks:
                while not stop.is_set():
                    try:
                        q.put(block, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(done)
        except BaseException as exc:  # handed over to the consumer
            q.put(exc)

    t = threading.Thread(target=reader, name="logparse-reader", daemon=True)
    t.start()
    try:
        while True:
            item = q.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        t.join(timeout=1)


class BulkReader:
    """Reads one source into a :class:`logparse.pipeline.StreamParser` with vectorized blocks."""

    def __init__(self, src, sp, block_bytes: int | None = None, stamps: bool = False, on_record=None) -> None:
        self.src = src
        self.sp = sp
        self.block_bytes = max(block_bytes or block_bytes_for(src.fmt), 1)
        self.fmt = src.fmt
        self.parser = src.line_parser()
        self.pid_key: dict[Any, tuple] = {}
        # a window of a longer input (watch's ShiftedSource) numbers its lines from ``shift + 1``, as
        # its records do on the record path: a launch's line references must not depend on the path
        self.line_no = getattr(src, "shift", 0)
        self.last_python_row = -2
        #: count batch lines per stamp (``StreamParser.add_runtime``'s ``stamps``)
        self.stamps = stamps
        #: called with each record the record path reads (the store notes journal cursors)
        self.on_record = on_record

    # ------------------------------------------------------------------ reading
    def _blocks(self, chunks):
        """The input cut into blocks of whole lines (without the final newline)."""
        carry = b""
        for piece, final in gathered(chunks, self.block_bytes):
            data = carry + piece
            if final:
                if data.endswith(b"\n"):
                    data = data[:-1]
                if data:
                    yield data
                return
            cut = data.rfind(b"\n")
            if cut < 0:
                carry = data
                continue
            yield data[:cut]
            carry = data[cut + 1 :]

    def run(self, workers: int | None = None) -> None:
        """Classify blocks (in worker processes for large inputs) and apply them in order."""
        if workers is None:
            workers = _workers_for(getattr(self.src, "size", None) or 0, self.block_bytes, self.fmt)
        with self.src.open_content() as content:
            if self.fmt == "journal-export":
                blocks = bulk_export.segments(content.chunks, self.block_bytes)
            else:
                blocks = self._blocks(content.chunks)
            if workers <= 1:
                # closed right away on any exit (Ctrl-C too), not when the generator is collected
                with closing(_prefetch(blocks)) as prefetched:
                    self._run_threads(prefetched, content.crlf)
            else:
                self._run_parallel(blocks, workers, content.crlf)
            for rec in self.parser.finish():
                self._feed_record(rec)
            content.end()

    def _run_threads(self, blocks, crlf: bool) -> None:
        """Classify two blocks at a time in threads, apply them in order.

        numpy (:mod:`.bulk_template`) runs one thread per block and releases the GIL in its loops,
        as polars does: two blocks in flight keep both cores busy.  Raw export entries are read by
        the record path in this thread, in their place."""
        from collections import deque
        from concurrent.futures import ThreadPoolExecutor

        threads = _threads()
        if threads <= 1:
            for item in blocks:
                self._apply_item(item, crlf)
            return
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="logparse-classify") as pool:
            inflight: deque = deque()
            for item in blocks:
                if item.__class__ is bulk_export.Raw:
                    inflight.append((item, None))
                else:
                    data = item.data if item.__class__ is bulk_export.Clean else item
                    inflight.append(
                        (item, pool.submit(classify_block, data, self.fmt, crlf, self.stamps) if data else None)
                    )
                while len(inflight) > threads:
                    self._apply_done(*inflight.popleft())
            while inflight:
                self._apply_done(*inflight.popleft())

    def _apply_done(self, item, future) -> None:
        if item.__class__ is bulk_export.Raw:
            self._raw_entries(item.data)
        elif future is not None:
            self._apply_block(future.result())

    def _apply_item(self, item, crlf: bool) -> None:
        if item.__class__ is bulk_export.Raw:
            self._raw_entries(item.data)
        elif item.__class__ is bulk_export.Clean:
            if item.data:
                self._apply_block(classify_block(item.data, self.fmt, crlf, self.stamps))
        else:
            self._apply_block(classify_block(item, self.fmt, crlf, self.stamps))

    def _run_parallel(self, blocks, workers: int, crlf: bool) -> None:
        import multiprocessing
        from collections import deque
        from concurrent.futures import ProcessPoolExecutor

        # spawn, not fork: polars' thread pool does not survive a fork.
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            inflight: deque = deque()
            for data in blocks:
                if data.__class__ is bulk_export.Raw:
                    while inflight:
                        self._apply_block(inflight.popleft().result())
                    self._raw_entries(data.data)
                    continue
                if data.__class__ is bulk_export.Clean:
                    data = data.data
                inflight.append(pool.submit(classify_block, data, self.fmt, crlf, self.stamps))
                while len(inflight) > workers + 1:  # bounded memory: a few blocks in flight
                    self._apply_block(inflight.popleft().result())
            while inflight:
                self._apply_block(inflight.popleft().result())

    def _apply_block(self, res: BlockResult) -> None:
        first = self.line_no + 1
        self.line_no += res.n
        counts = self.sp.counts
        counts.total += res.vec_total
        counts.parsed += res.vec_parsed
        counts.noise += res.vec_total - res.vec_parsed
        self.sp.engine_pids.update(res.sglang_pids)
        self._samples = res.samples
        aggs = res.aggs
        self._apply(aggs.get(-1))  # batch rows before the first python row of this block
        line_rows = res.py_rows if res.py_line_rows is None else res.py_line_rows
        entries = res.py_line_rows is not None
        cursors = iter(res.cursors)
        pending = next(cursors, None)
        for k, (row, line_row, line) in enumerate(zip(res.py_rows, line_rows, res.py_lines)):
            while pending is not None and pending[0] < row:  # streams' cursors, in entry order
                self.src.last_cursor[pending[1]] = pending[2]
                pending = next(cursors, None)
            if row != self.last_python_row + 1:
                self._gap()
            self.last_python_row = row
            if entries:
                self._python_entries(first + line_row, line)
            else:
                self._python_line(first + line_row, line)
            self._apply(aggs.get(k))
        while pending is not None:
            self.src.last_cursor[pending[1]] = pending[2]
            pending = next(cursors, None)
        self.last_python_row -= res.n if res.rows is None else res.rows  # the next block's rows start at 0

    def _raw_entries(self, data: bytes) -> None:
        """Entries the record path reads as they are (a binary field): python rows of their own."""
        if self.last_python_row != -1:
            self._gap()
        self._python_entries(self.line_no + 1, data)
        self.line_no += data.count(b"\n")
        self.last_python_row = -1

    def _python_entries(self, n: int, data: bytes) -> None:
        reader = ExportReader(self.parser, (data,))
        reader.line_no = n
        for r in reader.records(finish=False):
            for rec in r if isinstance(r, list) else (r,):
                self._feed_record(rec)

    # ------------------------------------------------------------------ feeding the stream parser
    def _gap(self) -> None:
        """Lines were handled in bulk since the last python line: they were well-formed SGLang
        lines, which end any multi-line record (traceback, warning, journal continuation)."""
        self.sp.end_multiline_records()
        self.parser.end_continuation()

    def _python_line(self, n: int, line: str | bytes) -> None:
        raw = line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")
        r = self.parser.parse(n, raw)
        if r is None:
            return
        for rec in r if isinstance(r, list) else (r,):
            self._feed_record(rec)

    def _feed_record(self, rec) -> None:
        if self.on_record is not None:
            self.on_record(rec)
        if rec.ts.__class__ is tuple:  # year-less stamp (not a bulk format); drop the outer time
            rec.ts = None
        if rec.pid is not None or rec.host is not None:
            self.pid_key[rec.pid] = rec.stream_key()
        self.sp.feed(rec)

    def _sample_key(self, pid) -> tuple:
        """The stream of a pid whose batch lines came before any python row of it (a window that
        starts mid-run): its record's, read from one of its lines by a parser of its own."""
        sample = self._samples.get(pid)
        if pid is None or sample is None:
            return (None, None, None, pid)
        parser = LineParser(_QuietSink(self.src.name), self.fmt)
        if sample.__class__ is bytes:
            recs = [r for rs in ExportReader(parser, (sample,)).records(finish=False) for r in _listed(rs)]
        else:
            recs = _listed(parser.parse(1, sample.encode("utf-8", "surrogatepass")))
        return recs[0].stream_key() if recs else (None, None, None, pid)

    def _apply(self, items) -> None:
        if not items:
            return
        for pid, agg in items:
            key = self.pid_key.get(pid)
            if key is None:
                key = self.pid_key[pid] = self._sample_key(pid)
            stamps = agg.pop("stamps", None)
            if stamps is None:
                self.sp.add_runtime(key, agg, engine="sglang")
            else:
                self.sp.add_runtime(key, agg, stamps, engine="sglang")


def _listed(r) -> list:
    return [] if r is None else r if isinstance(r, list) else [r]


class _QuietSink:
    """Where a parser that only reads a line's stream reports (nothing of it is kept)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.last_cursor: dict = {}

    def note_problem(self, kind: str, n: int = 1) -> None:
        return None

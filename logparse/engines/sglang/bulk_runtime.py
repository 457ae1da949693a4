"""The runtime figures of the vectorized path: batch lines decoded and aggregated, in bulk.

A ``Decode batch`` / ``Prefill batch`` line reaches a launch as a share of its runtime aggregate
(the same definitions as :class:`logparse.engines.sglang.assemble.RuntimeAgg`), not as an event:

* :func:`batch_rows` decodes the stamp and the four figures of the batch rows polars classified
  (:mod:`.bulk_classify`), cut by literal finds; a figure out of its bound
  (:data:`logparse.grammar.bounds.BATCH_FIELDS`) marks the row ``odd``, for the record path;
* :func:`aggregate` reduces them per segment (the batch rows after the k-th python row) and pid,
  :func:`stamp_counts` keeps the stamp of each (the store merges overlapping journal windows with
  them);
* the rows :mod:`.bulk_template` proved (numpy) are aggregated by :func:`one_group` (the usual
  block: one segment, one pid) or framed (:func:`proven_frame`) and merged with the polars rows'
  (:func:`merged_aggregates`);
* :func:`aggregates_by_segment` hands them to the reader as ``{segment: [(pid, aggregate)]}``.
"""

from __future__ import annotations

from typing import Any

from logparse.grammar import bounds, runtime_decoder
from logparse.grammar.fast import MAX_THROUGHPUT, THROUGHPUT_EDGES, THROUGHPUT_ZERO


def batch_rows(batch):
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


#: The field (:data:`logparse.grammar.bounds.BATCH_FIELDS`) of each figure column.
_FIGURE_FIELDS = {
    "running": "running_req",
    "usage": "token_usage",
    "queue": "queue_req",
    "tokens": "token",
    "gen": "gen_throughput",
}


def _batch_fields(batch, field, foreign: bool = False):
    """The stamp and the four fields of batch rows (a lazy frame), cut by ``field``; ``odd``: a
    figure that is no ASCII number within its bound (:data:`logparse.grammar.bounds.BATCH_FIELDS`),
    or (``foreign``: rows that are not ASCII) digits of another script.  The record path reads
    such a row (:func:`.bulk_classify.collect`), warning and all, as it does whichever path reads
    the input."""
    import polars as pl

    msg = pl.col("msg")
    decode = msg.str.contains("] " + runtime_decoder.family_word("sglang", "decode_batch"), literal=True)

    def read(name: str):
        return field(msg, runtime_decoder.label("sglang", name))

    texts = {
        "running": read("running_req"),
        # SWA's full token usage: its label ends with the plain one's ("full token usage: ")
        "usage": read("token_usage"),
        "queue": read("queue_req"),
        "tokens": pl.when(decode).then(pl.coalesce(read("token"), read("full_token"))),
        "gen": pl.when(decode).then(read("gen_throughput")),
    }
    batch = batch.with_columns(**{"_" + k: t for k, t in texts.items()})  # each cut once, read twice
    values = {k: pl.col("_" + k).cast(pl.Float64 if k in ("usage", "gen") else pl.Int64, strict=False) for k in texts}
    odd = msg.str.contains(bounds.FOREIGN_DIGIT_PATTERN) if foreign else pl.lit(False)
    for k in texts:
        bound = bounds.BATCH_FIELDS.get(_FIGURE_FIELDS[k]) or bounds.bound_of(_FIGURE_FIELDS[k])
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


def _gen_counted():
    """Whether a row's generation throughput is one value of the distribution (as
    :meth:`logparse.launches.runtime.RuntimeAgg.add_line` counts them)."""
    import polars as pl

    return pl.col("gen").is_between(0, MAX_THROUGHPUT).fill_null(False)


def _gen_extremes():
    import polars as pl

    gen = pl.col("gen").filter(_gen_counted())
    return gen.min().alias("gen_throughput_min"), gen.max().alias("gen_throughput_max")


def aggregate(rows):
    """Runtime aggregates per (segment, pid) of the batch rows (:func:`batch_rows`)."""
    import polars as pl

    return rows.group_by("seg", "pid").agg(
        pl.len().alias("batch_lines"),
        pl.col("running").max().alias("peak_running_req"),
        pl.col("usage").max().alias("peak_token_usage"),
        pl.col("queue").max().alias("peak_queue_req"),
        pl.col("tokens").max().alias("peak_tokens"),
        pl.col("ts").min().alias("first_runtime_at"),
        pl.col("ts").max().alias("last_runtime_at"),
        *_gen_extremes(),
    )


def histogram(rows):
    """The generation throughput's distribution per (segment, pid) of batch rows: a row per bucket
    (:class:`logparse.launches.runtime.Histogram`'s fixed edges) and its count; counts of any split of
    the rows add up to the same."""
    import polars as pl

    bucket = pl.lit(pl.Series(THROUGHPUT_EDGES)).search_sorted(pl.col("gen"), side="right").cast(pl.Int64)
    return (
        rows.filter(_gen_counted())
        .group_by("seg", "pid", (bucket + THROUGHPUT_ZERO).alias("bucket"))
        .agg(pl.len().cast(pl.Int64).alias("n"))
    )


def merged_histograms(parts: list):
    """Histogram frames (:func:`histogram`) of the same rows' pieces as one."""
    import polars as pl

    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    return pl.concat([p.cast(parts[0].schema) for p in parts]).group_by("seg", "pid", "bucket").agg(pl.col("n").sum())


def stamp_counts(rows):
    """The batch rows per ISO stamp, by segment and pid: kept as frames of ``ts`` and ``n`` (a
    journal has a stamp every second or so, too many for Python dicts; the few questions asked of
    them are :class:`logparse.store.runtime.StampFrame`'s)."""
    import polars as pl

    ts = pl.col("ts").str.replace(" ", "T", literal=True)
    return rows.group_by("seg", "pid", ts).agg(pl.len().cast(pl.Int64).alias("n"))


def aggregates_by_segment(agg) -> dict[int, list[tuple[Any, dict]]]:
    """``{segment: [(pid, aggregate), ...]}`` with ISO times; with stamps counted
    (:func:`stamp_counts`), each aggregate's ``stamps`` is its frame of ``ts`` and ``n``."""
    agg, stamps, hist = agg
    parts = stamps.partition_by("seg", "pid", as_dict=True, include_key=False) if stamps is not None else None
    hists = hist.sort("bucket").partition_by("seg", "pid", as_dict=True, include_key=False) if hist is not None else {}
    aggs: dict[int, list[tuple[Any, dict]]] = {}
    for row in agg.iter_rows(named=True):
        counts = hists.get((row["seg"], row["pid"]))
        if counts is not None and len(counts):
            row["gen_throughput_hist"] = [list(p) for p in counts.iter_rows()]
        for k in ("first_runtime_at", "last_runtime_at"):
            if row[k]:
                row[k] = row[k].replace(" ", "T", 1)
        if parts is not None:
            row["stamps"] = parts[(row["seg"], row["pid"])]
        aggs.setdefault(row.pop("seg"), []).append((row.pop("pid"), row))
    return aggs


def one_group(decode, prefill, python_rows, with_pid: bool, stamps: bool, b=None):
    """The aggregates of the proven rows, grouped by (segment, pid) with numpy, and the first row of
    each pid: ``({seg: [(pid, aggregate)]}, {pid: row})`` (the same figures as
    :func:`merged_aggregates`' polars query, for blocks whose other rows the record path reads)."""
    import numpy as np

    from logparse.engines.sglang import bulk_template

    parts = [(r, r is decode) for r in (decode, prefill) if len(r.row)]
    rows = np.concatenate([r.row for r, _ in parts])
    seg = np.searchsorted(python_rows, rows, side="right") - 1
    pid = np.concatenate([r.cols["pid"] for r, _ in parts]) if with_pid else np.zeros(len(rows), np.int64)
    groups, order, cuts = _groups(seg, pid)
    cols = {
        c: _in_order(np.concatenate([r.cols[c] for r, _ in parts]), order)
        for c in ("running", "usage", "queue", "ts", "ts_at")
    }
    is_decode = _in_order(np.concatenate([np.full(len(r.row), d) for r, d in parts]), order)
    tokens = _in_order(
        np.concatenate([r.cols["tokens"] if d else np.zeros(len(r.row), np.int64) for r, d in parts]), order
    )
    gen = _in_order(np.concatenate([r.cols["gen"] if d else np.zeros(len(r.row)) for r, d in parts]), order)
    rows_in_order = _in_order(rows, order)
    out: dict[int, list] = {}
    first: dict = {}
    for g in range(groups.shape[1]):
        lo, hi = cuts[g], cuts[g + 1]
        ts = cols["ts"][lo:hi]
        dec = is_decode[lo:hi]
        agg = {
            "batch_lines": int(hi - lo),
            "peak_running_req": int(cols["running"][lo:hi].max()),
            "peak_token_usage": float(cols["usage"][lo:hi].max()),
            "peak_queue_req": int(cols["queue"][lo:hi].max()),
            "peak_tokens": int(tokens[lo:hi][dec].max()) if dec.any() else None,
            "first_runtime_at": bulk_template.stamp_text(int(ts.min())),
            "last_runtime_at": bulk_template.stamp_text(int(ts.max())),
            **(_gen_figures(gen[lo:hi][dec]) if dec.any() else {}),
        }
        if stamps:
            agg["stamps"] = _stamp_frame(ts, [cols["ts_at"][lo:hi]], b)
        key = int(groups[1, g]) if with_pid else None
        out.setdefault(int(groups[0, g]), []).append((key, agg))
        first[key] = min(first.get(key, rows.max()), int(rows_in_order[lo:hi].min()))
    return out, first


def _groups(seg, pid) -> tuple:
    """The (segment, pid) groups of rows: ``(groups, order, cuts)``, a 2×G array of each group's
    segment and pid, the rows in group order (each group's rows together, decode rows first as they
    came; None: as they are) and where each group's rows begin in it.  One group (a block of one
    launch's runtime lines, the common case) costs no sort and no gather."""
    import numpy as np

    n = len(seg)
    if n and seg.min() == seg.max() and pid.min() == pid.max():
        return np.array([[seg[0]], [pid[0]]]), None, np.array([0, n])
    from logparse.engines.sglang.bulk_template import distinct_ints

    pids = np.asarray(distinct_ints(pid), np.int64)
    key = (seg + 1) * len(pids) + np.searchsorted(pids, pid)  # segment -1: the rows before any Python row
    counts = np.bincount(key)
    keys = np.flatnonzero(counts)
    # a stable sort of keys that fit 16 bits is numpy's radix sort: no comparison sort of a block
    order = np.argsort(key.astype(np.uint16) if keys[-1] < 1 << 16 else key, kind="stable")
    return (
        np.stack([keys // len(pids) - 1, pids[keys % len(pids)]]),
        order,
        np.concatenate([[0], np.cumsum(counts[keys])]),
    )


def _in_order(a, order):
    return a if order is None else a[order]


def _gen_figures(gen) -> dict[str, Any]:
    """The generation throughput's distribution of proven decode rows (numpy), as
    :meth:`logparse.launches.runtime.RuntimeAgg.merge` takes it."""
    import numpy as np

    gen = gen[(gen >= 0) & (gen <= MAX_THROUGHPUT)]
    if not len(gen):
        return {}
    counts = np.bincount(np.searchsorted(THROUGHPUT_EDGES, gen, side="right"))  # no sort: a bucket per edge
    buckets = np.flatnonzero(counts)
    return {
        "gen_throughput_hist": [[int(b) + THROUGHPUT_ZERO, int(counts[b])] for b in buckets],
        "gen_throughput_min": float(gen.min()),
        "gen_throughput_max": float(gen.max()),
    }


def _stamp_frame(ts, at: list, b):
    """The rows per ISO stamp (the ``(ts, n)`` pair :func:`logparse.store.runtime.stamp_counts`
    takes: numpy byte strings and counts), one entry a run of rows of one stamp (a log's rows come
    in time order: a run a second, not an entry a line); the texts copied from the block when all
    have one width, else written from :mod:`.bulk_template`'s stamp numbers.  No polars: a stream
    read whole by the C scanner never imports it."""
    import numpy as np

    from logparse.engines.sglang import bulk_template

    first = np.flatnonzero(np.concatenate(([True], ts[1:] != ts[:-1])))
    n = np.diff(np.append(first, len(ts))).astype(np.int64)
    codes = ts[first]
    milli = codes % 10000 > 0
    if not milli.any() or milli.all():
        width = 23 if milli.any() else 19
        texts = bulk_template.stamp_texts(b, np.concatenate(at)[first], width)
        return np.ascontiguousarray(texts).view(f"S{width}"), n
    return np.array([bulk_template.stamp_text(c) for c in codes.tolist()], dtype="S23"), n


def proven_frame(decode, prefill, python_rows, with_pid: bool):
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
                    "gen": pl.Series(c["gen"] if decoding else [None] * n, dtype=pl.Float64),
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


def merged_aggregates(agg, frame, stamps: bool):
    """The aggregates (and stamps) of the polars rows and the proven rows together."""
    import polars as pl

    rest, rest_stamps, rest_hist = agg if agg is not None else (None, None, None)
    ts = pl.col("ts")
    mine = frame.group_by("seg", "pid").agg(
        pl.len().alias("batch_lines"),
        pl.col("running").max().alias("peak_running_req"),
        pl.col("usage").max().alias("peak_token_usage"),
        pl.col("queue").max().alias("peak_queue_req"),
        pl.col("tokens").max().alias("peak_tokens"),
        _stamp_text(ts.min(), " ").alias("first_runtime_at"),
        _stamp_text(ts.max(), " ").alias("last_runtime_at"),
        *_gen_extremes(),
    )
    hist = merged_histograms([rest_hist, histogram(frame)])
    mine_stamps = (
        frame.group_by("seg", "pid", _stamp_text(ts, "T").alias("ts")).agg(pl.len().cast(pl.Int64).alias("n"))
        if stamps
        else None
    )
    if rest is None:
        return mine, mine_stamps, hist
    both = (
        pl.concat([rest, mine.cast(rest.schema)])
        .group_by("seg", "pid")
        .agg(
            pl.col("batch_lines").sum(),
            *(pl.col(k).max() for k in ("peak_running_req", "peak_token_usage", "peak_queue_req", "peak_tokens")),
            pl.col("first_runtime_at").min(),
            pl.col("last_runtime_at").max(),
            pl.col("gen_throughput_min").min(),
            pl.col("gen_throughput_max").max(),
        )
    )
    if mine_stamps is None or rest_stamps is None:
        return both, None, hist
    return both, pl.concat([rest_stamps, mine_stamps.cast(rest_stamps.schema)]), hist

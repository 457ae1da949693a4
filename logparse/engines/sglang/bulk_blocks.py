"""One block of the vectorized path to its :class:`BlockResult`: numpy's templates first, polars for the rest.

:func:`classify_block` is pure (it runs in a worker process as well): a block of whole lines (or
of whole export entries, :mod:`.bulk_export`) is split, the batch and access lines that
:mod:`.bulk_template` proves are read by numpy, the other lines are classified by polars
(:mod:`.bulk_classify`) -- or, when they are few, all go to the record path -- and the batch lines
are reduced to runtime aggregates (:mod:`.bulk_runtime`).  The block sizes of each format are
chosen here too (:func:`block_bytes_for`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from logparse.engines.sglang import bulk_export, bulk_runtime
from logparse.engines.sglang.bulk_classify import classified, collect, messages, with_message

#: Default block size: bounded memory whatever the input size.
BLOCK_BYTES = 8 << 20
#: Block size of the formats :mod:`.bulk_template` reads first: numpy's gathers over a block of 4 MB
#: stay in the CPU's caches (a fifth less CPU than 8 MB, and than 2 MB, measured); polars' fixed
#: cost a block favours larger ones for the others.
TEMPLATE_BLOCK_BYTES = 4 << 20


def block_bytes_for(fmt: str) -> int:
    """The default block size of a format's bulk reading."""
    return TEMPLATE_BLOCK_BYTES if fmt in TEMPLATE_FORMATS or fmt == "journal-export" else BLOCK_BYTES


#: Formats whose blocks are first read by :mod:`.bulk_template` (the batch lines it proves skip polars).
TEMPLATE_FORMATS = frozenset({"plain", "journal-short-iso", "journal-short-iso-precise", "journal-json"})
#: Up to this many rows the templates leave in a block go to the record path as they are (a
#: polars query has a fixed cost of tens of ms a block, the record path ~20 µs a line).
RECORD_PATH_ROWS = 1000
#: Whether the MESSAGE of export entries is first read by :mod:`.bulk_template`.
TEMPLATE_EXPORT = True
#: A ``short-iso`` header as :mod:`.bulk_template` takes it for the block's reference: ASCII,
#: ``host ident[`` without another bracket (polars cuts at the first ``[`` and ``]: ``).
_REFERENCE_RE = re.compile(rb"\d{4}-\d\d-\d\dT[0-9:.+-]+ [\x20-\x5a\x5c\x5e-\x7e]*\[")


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


def scanner():
    """What runs the templates: the C scanner (:mod:`.bulk_native`) where it is built, else numpy
    (:mod:`.bulk_template`); both prove the same rows with the same figures."""
    from logparse.engines.sglang import bulk_native, bulk_template

    return bulk_native if bulk_native.available() else bulk_template


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


def classify_block(data: bytes, fmt: str, crlf: bool, stamps: bool = False) -> BlockResult:
    """Split and classify one block; reduce batch lines to aggregates.  Pure: runs anywhere.

    ``stamps``: also count the batch lines of each stamp (the store merges overlapping
    journal windows exactly with them)."""
    if fmt == "journal-export":
        return _classify_export(data, stamps)
    if not crlf and fmt in TEMPLATE_FORMATS:
        proven = _classify_proven(data, fmt, stamps)
        if proven is not None:
            return proven
    import polars as pl  # only here: a block the templates prove needs no polars at all

    lines = split_lines(data)
    if crlf:
        lines = lines.str.strip_suffix("\r")
    lf = pl.DataFrame({"line": lines}).with_row_index("i").lazy()
    py, counts, agg, pids, samples = collect(classified(with_message(lf, fmt), fmt), stamps, ["i", "line"])
    return BlockResult(
        len(lines),
        int(counts["vec_total"][0] or 0),
        int(counts["vec_parsed"][0] or 0),
        py["i"].to_list(),
        py["line"].to_list(),
        bulk_runtime.aggregates_by_segment(agg),
        pids["pid"].to_list() if fmt != "plain" else [],
        samples={pid: line for pid, _, line in samples.iter_rows()} if fmt != "plain" else {},
    )


def _classify_proven(data: bytes, fmt: str, stamps: bool) -> BlockResult | None:
    """:func:`classify_block` with the batch lines :mod:`.bulk_template` proves read by numpy and
    only the others classified by polars; None when no row of the block can be proven."""
    import numpy as np

    b = scanner().block_bytes(data)
    starts, ends = scanner().lines(b)
    rows = _message_rows(b, data, starts, ends, fmt)
    if rows is None:
        return None
    if isinstance(rows, tuple):  # JSON: the messages decoded into a buffer of their own
        b, rows = rows
    decode, prefill, access = scanner().batch_rows(b, rows)
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
        samples={
            pid: data[starts[i] : ends[i]].decode("utf-8", "surrogateescape") if v is None else v
            for pid, (i, v) in first.items()
        }
        if fmt != "plain"
        else {},
    )


def _with_proven(proven, py_rows: list, rest, with_pid: bool, stamps: bool, b):
    """What a block adds up to, its proven rows (``(decode, prefill, access)``) and the rows polars
    classified (``rest``: :func:`.bulk_classify.collect`'s counts, aggregates, pids and
    ``{pid: (row, sample)}``, all None when the record path reads them): the vectorized rows'
    counts, the aggregates by segment, the SGLang pids, and ``{pid: (row, sample or None)}``
    (None: the proven row's own)."""
    import numpy as np

    from logparse.engines.sglang.bulk_template import distinct_ints

    decode, prefill, access = proven
    counts, agg, pids, samples = rest
    python_rows = np.asarray(py_rows, dtype=np.int64)
    one = bulk_runtime.one_group(decode, prefill, python_rows, with_pid, stamps, b) if agg is None else None
    n_batch = len(decode.row) + len(prefill.row)
    pid_set = set(pids["pid"].to_list()) if pids is not None else set()
    for r in (decode, prefill, access):
        pid_set |= set(distinct_ints(r.cols["pid"])) if with_pid else set()
    if one is not None:
        aggs, first = one[0], {pid: (i, None) for pid, i in one[1].items()}
    else:
        frame = bulk_runtime.proven_frame(decode, prefill, python_rows, with_pid)
        aggs = bulk_runtime.aggregates_by_segment(bulk_runtime.merged_aggregates(agg, frame, stamps))
        first = _merged_samples(samples or {}, frame)
    return (
        (int(counts["vec_total"][0] or 0) if counts is not None else 0) + n_batch + len(access.row),
        (int(counts["vec_parsed"][0] or 0) if counts is not None else 0) + n_batch,
        aggs,
        sorted(pid_set) if with_pid else [],
        first,
    )


def _message_rows(b, data: bytes, starts, ends, fmt: str):
    """The rows whose message :mod:`.bulk_template` may read, positioned at it (None: none)."""
    import numpy as np

    from logparse.engines.sglang import bulk_template

    if fmt == "plain":
        return bulk_template.Rows(np.arange(len(starts)), starts.copy(), ends, {})
    if fmt == "journal-json":  # only the C scanner finds the messages of JSON lines
        from logparse.engines.sglang import bulk_native

        return bulk_native.json_rows(b, starts, ends) if bulk_native.available() else None  # (messages, rows)
    head = data[: ends[min(len(ends) - 1, 64)]]
    m = _REFERENCE_RE.search(head)
    while m is not None and m.start() and head[m.start() - 1] != 10:
        m = _REFERENCE_RE.search(head, m.start() + 1)
    if m is None or m.group(0)[4:5] != b"-" or m.group(0)[10:11] != b"T":
        return None
    return scanner().header_rows(b, starts, ends, m.group(0))


def _collect_rest(data: bytes, starts, ends, rest, fmt: str, stamps: bool):
    """:func:`.bulk_classify.collect` of the rows the templates did not prove (``rest``: their row
    numbers)."""
    import numpy as np
    import polars as pl

    # runs of consecutive rows: one slice each
    breaks = np.flatnonzero(np.diff(rest) != 1) + 1
    firsts = rest[np.concatenate(([0], breaks))] if len(rest) else rest
    lasts = rest[np.concatenate((breaks - 1, [len(rest) - 1]))] if len(rest) else rest
    joined = b"\n".join([data[s:e] for s, e in zip(starts[firsts].tolist(), ends[lasts].tolist())])
    lines = split_lines(joined) if len(rest) else pl.Series("line", [], dtype=pl.String)
    lf = pl.DataFrame({"i": rest, "line": lines}).lazy()
    return collect(classified(with_message(lf, fmt), fmt), stamps, ["i", "line"])


def _merged_samples(first: dict, frame) -> dict:
    """``{pid: (row, sample)}`` of each pid's first batch row, the polars rows' (``first``) and the
    proven rows' (``frame``, sample None: the caller reads it) together."""
    import polars as pl

    first = dict(first)
    for pid, i in frame.group_by("pid").agg(pl.col("i").min()).iter_rows():
        if pid not in first or i < first[pid][0]:
            first[pid] = (i, None)
    return first


def _classify_export(data: bytes, stamps: bool) -> BlockResult:
    """:func:`classify_block` of a block of whole export entries (:mod:`.bulk_export`): its rows
    are entries; python rows are their bytes, read by the record path."""
    import numpy as np

    eb = bulk_export.ExportBlock(data)
    pid = eb.pids()
    simple = eb.simple & (pid > 0)
    n = len(simple)
    if TEMPLATE_EXPORT:
        proven = _classify_export_proven(data, eb, pid, simple, stamps)
        if proven is not None:
            return proven
    import polars as pl  # only here: an input whose blocks the templates prove needs no polars at all

    frame = pl.DataFrame(
        {
            "i": np.arange(n),
            "msg": messages(data, eb, simple),
            "pid": pl.Series(np.where(simple, pid, 0)).replace(0, None),
        }
    )
    py, counts, agg, pids, samples = collect(classified(frame.lazy(), "journal-export"), stamps, ["i"])
    py_rows = py["i"].to_list()
    vec = np.ones(n, dtype=bool)
    vec[py_rows] = False
    return BlockResult(
        eb.n_lines,
        int(counts["vec_total"][0] or 0),
        int(counts["vec_parsed"][0] or 0),
        py_rows,
        eb.texts(py_rows),
        bulk_runtime.aggregates_by_segment(agg),
        pids["pid"].to_list(),
        eb.rows[py_rows].tolist(),
        eb.last_cursors(vec),
        n,
        {pid: text for (pid, _), text in zip(samples.iter_rows(), eb.texts(samples["i"].to_list()))},
    )


def _classify_export_proven(data: bytes, eb, pid, simple, stamps: bool) -> BlockResult | None:
    """:func:`_classify_export` with the entries whose MESSAGE :mod:`.bulk_template` proves read by
    numpy, the others by polars (or by the record path when few); None when none is proven."""
    import numpy as np

    from logparse.engines.sglang import bulk_template

    ms, me = eb.value_spans("MESSAGE")
    entries = np.flatnonzero(simple)
    b = scanner().block_bytes(data)
    rows = bulk_template.Rows(entries, ms[entries], me[entries], {"pid": pid[entries]})
    decode, prefill, access = scanner().batch_rows(b, rows)
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
        import polars as pl

        frame = pl.DataFrame(
            {"i": rest, "msg": messages(data, eb, simple)[rest], "pid": pl.Series(np.where(simple, pid, 0)[rest])}
        ).with_columns(pl.col("pid").replace(0, None))
        py, counts, agg, pids, samples = collect(classified(frame.lazy(), "journal-export"), stamps, ["i"])
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

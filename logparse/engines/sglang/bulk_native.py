"""The templates of :mod:`.bulk_template` run by the C scanner (``_templates.c``), when it is built.

:mod:`.bulk_template` proves a block's batch and access rows with numpy, one pass over the rows per
step of a template: tens of passes a row, most of the time of a long log's ``parse`` on two cores.
The C scanner makes the same checks row by row, leaving a row at its first failed step.  This module
hands it the same templates (compiled here from :func:`.bulk_template.template`, itself generated
from ``grammars/sglang/runtime.toml``) and returns the same :class:`.bulk_template.Rows`: which of
the two ran is invisible downstream (``tests/engines/sglang/test_bulk_native.py`` compares them on
every shape and on near misses, and the property test of the stage runs with each).

The extension is optional: ``pip install`` builds it where a C compiler is found
(``[tool.setuptools] ext-modules``); without it, or with ``LOGPARSE_NATIVE=0``, numpy runs the
templates.
"""

from __future__ import annotations

import os
from functools import cache

import numpy as np

from logparse.engines.sglang import bulk_template
from logparse.grammar import bounds

try:  # built by pip where a compiler is found
    import logparse.engines.sglang._templates as _templates
except ImportError:  # pragma: no cover - a machine without a compiler
    _templates = None  # type: ignore[assignment]

_LIT, _INT, _FLT, _BOOL = 0, 1, 2, 3
#: Checks no figure needs (the bounds :func:`.bulk_template._step` skips).
_NO_CHECK = 10**15


def available() -> bool:
    """Whether the C scanner runs (built, and not turned off with ``LOGPARSE_NATIVE=0``)."""
    return _templates is not None and os.environ.get("LOGPARSE_NATIVE", "1") != "0"


def block_bytes(data: bytes) -> bulk_template.Bytes:
    """A block as the C scanner reads it: in place, not padded (it checks every offset)."""
    return bulk_template.Bytes(data, pad=False)


def lines(b: bulk_template.Bytes) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`.bulk_template.Bytes.lines`, found with memchr."""
    data = b.arr[: b.size]
    n = _templates.newlines(data)
    starts, ends = np.empty(n + 1, np.int64), np.empty(n + 1, np.int64)
    _templates.lines(data, starts, ends)
    return starts, ends


@cache
def columns() -> tuple[tuple[str, ...], bytes]:
    """The figure columns the templates keep (:data:`.bulk_template.COLUMNS`), and for each whether
    it is a decimal (1) or an integer (0), from the steps that fill it."""
    kinds: dict[str, str] = {}
    for steps in bulk_template.DECODE + bulk_template.PREFILL:
        for step in steps:
            if step[:2] in ("i:", "f:") and step[2:] in bulk_template.COLUMNS:
                col = bulk_template.COLUMNS[step[2:]]
                if kinds.setdefault(col, step[:2]) != step[:2]:
                    raise ValueError(f"column {col} is filled by integers and decimals")
    names = tuple(kinds)
    return names, bytes(1 if kinds[c] == "f:" else 0 for c in names)


def _compiled(step: str) -> tuple:
    """One step of a template as the scanner takes it: ``(op, text, col, check, never, lo, hi)``."""
    names = columns()[0]
    if step == "bool":
        return (_BOOL, b"", -1, 0, 0, 0.0, 0.0)
    if step[:2] not in ("i:", "f:"):
        return (_LIT, step.encode(), -1, 0, 0, 0.0, 0.0)
    field = step[2:]
    col = names.index(bulk_template.COLUMNS[field]) if field in bulk_template.COLUMNS else -1
    bound = bounds.bound_of(field)
    never = int(bound.whole and step.startswith("f:"))
    check = int(bound.lo > 0 or bound.hi < _NO_CHECK)
    return (_INT if step.startswith("i:") else _FLT, b"", col, check, never, float(bound.lo), float(bound.hi))


@cache
def program() -> tuple[tuple, tuple, tuple, tuple, tuple[frozenset, ...], tuple[frozenset, ...]]:
    """The decode and prefill templates compiled, the access lines' methods and reasons, and the
    columns each template fills."""

    def family(templates: tuple) -> tuple:
        return tuple(tuple(_compiled(s) for s in steps) for steps in templates)

    def filled(templates: tuple) -> tuple[frozenset, ...]:
        return tuple(
            frozenset(
                bulk_template.COLUMNS[s[2:]] for s in steps if s[:2] in ("i:", "f:") and s[2:] in bulk_template.COLUMNS
            )
            for steps in templates
        )

    return (
        family(bulk_template.DECODE),
        family(bulk_template.PREFILL),
        tuple(m.encode() for m in bulk_template.METHODS),
        tuple(r.encode() for r in bulk_template.REASONS),
        filled(bulk_template.DECODE),
        filled(bulk_template.PREFILL),
    )


def header_rows(b: bulk_template.Bytes, starts: np.ndarray, ends: np.ndarray, reference: bytes) -> bulk_template.Rows:
    """:func:`.bulk_template.header_rows`, scanned in C."""
    gap = reference.index(b" ")
    pattern = "".join("D" if chr(c).isdigit() else chr(c) for c in reference[:gap])
    n = len(starts)
    ok, pid, msg = np.zeros(n, np.int8), np.empty(n, np.int64), np.empty(n, np.int64)
    real = pattern.startswith("DDDD-DD-DDTDD:DD:DD")
    st, en = np.ascontiguousarray(starts, np.int64), np.ascontiguousarray(ends, np.int64)
    _templates.headers(b.arr, st, en, pattern, reference[gap:], real, ok, pid, msg)
    rows = np.flatnonzero(ok)
    return bulk_template.Rows(rows, msg[rows], ends[rows], {"pid": pid[rows]})


def batch_rows(b: bulk_template.Bytes, rows: bulk_template.Rows) -> tuple:
    """:func:`.bulk_template.batch_rows`, scanned in C: the proven Decode, Prefill and access rows."""
    decode, prefill, methods, reasons, decode_cols, prefill_cols = program()
    names, is_float = columns()
    n, k = len(rows.row), len(names)
    kind, tmpl = np.zeros(n, np.int8), np.zeros(n, np.int8)
    ts, ts_at = np.zeros(n, np.int64), np.zeros(n, np.int64)
    icols, fcols = np.zeros((n, k), np.int64), np.zeros((n, k), np.float64)
    pos, end = np.ascontiguousarray(rows.pos, np.int64), np.ascontiguousarray(rows.end, np.int64)
    _templates.batch(b.arr, pos, end, decode, prefill, methods, reasons, is_float, kind, tmpl, ts, ts_at, icols, fcols)
    base = {**rows.cols, "ts": ts, "ts_at": ts_at}

    def family(code: int, filled: tuple[frozenset, ...]) -> bulk_template.Rows:
        sel = np.flatnonzero(kind == code)
        cols = {c: v[sel] for c, v in base.items()}
        used = [filled[t] for t in bulk_template.distinct_ints(tmpl[sel])] if filled else []
        if used:  # as bulk_template._family: the columns every template that proved a row fills
            for c in sorted(frozenset.intersection(*used), key=names.index):
                j = names.index(c)
                cols[c] = (fcols if is_float[j] else icols)[sel, j]
        return bulk_template.Rows(rows.row[sel], rows.end[sel], rows.end[sel], cols)

    return family(1, decode_cols), family(2, prefill_cols), family(3, ())


def span_ints(block: bytes, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """:meth:`.bulk_export.ExportBlock.pids` scanned in C: the value of each span of 1 to 10 digits, else 0."""
    s, e = np.ascontiguousarray(s, np.int64), np.ascontiguousarray(e, np.int64)
    out = np.empty(len(s), np.int64)
    _templates.span_ints(block, s, e, out)
    return out


def same_spans(block: bytes, s: np.ndarray, e: np.ndarray, k: int) -> np.ndarray:
    """:func:`.bulk_export._same_span` in C (memcmp): which spans hold the same bytes as span ``k``."""
    s, e = np.ascontiguousarray(s, np.int64), np.ascontiguousarray(e, np.int64)
    out = np.empty(len(s), np.int8)
    _templates.same_spans(block, s, e, k, out)
    return out.view(bool)


def export_entries(block: bytes, names: tuple[bytes, ...], slots: bytes, n_watched: int, n_once: int):
    """:class:`.bulk_export.ExportBlock`'s entries, found in one pass in C: the block's count of lines
    and per entry (a row) its first line, start, flags (1 kept, 2 simple) and the value span of each
    of the first ``n_once`` watched fields (``slots``: each name's watched field, 255 none)."""
    n_lines, table = _templates.entries(block, names, slots, n_watched, n_once)
    return n_lines, np.frombuffer(table, np.int64).reshape(-1, 3 + 2 * n_once)


def json_rows(b: bulk_template.Bytes, starts: np.ndarray, ends: np.ndarray) -> tuple:
    """The messages of ``-o json`` lines whose MESSAGE and _PID are plain (see ``_templates.c``):
    their own :class:`.bulk_template.Bytes` (each message decoded, on a line of its own) and the
    rows positioned at them there, column ``pid``."""
    n = len(starts)
    ok = np.zeros(n, np.int8)
    pid, ms, me = (np.empty(n, np.int64) for _ in range(3))
    st, en = np.ascontiguousarray(starts, np.int64), np.ascontiguousarray(ends, np.int64)
    messages = _templates.json(b.arr, st, en, ok, pid, ms, me)
    rows = np.flatnonzero(ok)
    return block_bytes(messages), bulk_template.Rows(rows, ms[rows], me[rows], {"pid": pid[rows]})

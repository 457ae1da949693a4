"""Each launch's lines per input (the ``launch_sources`` table): a source's first and last line of
a launch, the ranges of several views of one launch merged, read from the store and written back
(with each source's count of launches).
"""

from __future__ import annotations

from logparse.store.rows import as_lists, values_sql

#: A source's lines of one launch: (first line, last line) in that source; None where it holds none.
Range = tuple[int | None, int | None]


def merge_ranges(*many: dict[str, Range]) -> dict[str, Range]:
    """Ranges of several views of one launch, per source: the first and the last line any view holds."""
    out: dict[str, Range] = {}
    for ranges in many:
        for sid, (lo, hi) in ranges.items():
            olo, ohi = out.get(sid, (None, None))
            out[sid] = (_min(olo, lo), _max(ohi, hi))
    return out


def _min(a, b):
    return b if a is None else a if b is None else min(a, b)


def _max(a, b):
    return b if a is None else a if b is None else max(a, b)


def stored_ranges(con, ids: list[str]) -> dict[str, dict[str, Range]]:
    """The stored ranges of these launches: per launch, each of its sources' first and last line of it."""
    if not ids:
        return {}
    rows = con.execute(
        "SELECT launch_id, source_id, first_line, last_line FROM launch_sources "
        "WHERE launch_id IN (SELECT unnest(?::VARCHAR[]))",
        [sorted(ids)],
    ).fetchall()
    out: dict[str, dict[str, Range]] = {}
    for lid, sid, lo, hi in rows:
        out.setdefault(lid, {})[sid] = (lo, hi)
    return out


def write_ranges(con, ranges: dict[str, dict[str, Range]]) -> None:
    """``launch_sources`` rows of these launches (each source's first and last line of it), and each
    of those sources' count of launches."""
    rows = [(lid, sid, lo, hi) for lid, per in sorted(ranges.items()) for sid, (lo, hi) in sorted(per.items())]
    if not rows:
        return
    links = values_sql({"launch_id": "str", "source_id": "str", "first_line": "int", "last_line": "int"})
    cols = as_lists(rows, 4)
    con.execute(
        f"DELETE FROM launch_sources WHERE (launch_id, source_id) IN (SELECT (launch_id, source_id) FROM ({links}))",
        cols,
    )
    con.execute(f"INSERT INTO launch_sources BY NAME {links}", cols)
    con.execute(
        "UPDATE sources SET n_launches = c.n FROM (SELECT source_id, count(*)::INTEGER AS n FROM launch_sources "
        "WHERE source_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY source_id) c WHERE sources.source_id = c.source_id",
        [sorted(set(cols[1]))],
    )

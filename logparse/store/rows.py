"""Rows written by DuckDB itself: the store's small writes without polars or Arrow.

Importing polars and pyarrow (with numpy) costs more than an ingest of one small file does; so
the rows of a small input (:func:`logparse.store.frames.table_rows`) are handed to DuckDB as one
typed list per column (``INSERT ... SELECT unnest(?::T[]), ...``), one statement per table.  The
columns and their kinds are the one declaration of :mod:`logparse.store.columns`.

What lands is what the polars path (:func:`logparse.store.frames.to_frame`) stores, value for
value (``tests/test_small_write.py`` compares both over the samples and the corpus): a timestamp's
text is parsed here only when it is plainly ISO (``YYYY-MM-DDTHH:MM:SS[.fraction]``, or a time
without a date, which is no timestamp); any other text leaves the rows to polars, whose parser
decides what it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timedelta

from logparse.store.columns import SQL_TYPES
from logparse.store.frames import TABLE_KINDS, TEXT_TIMESTAMPS

#: Inputs whose rows (all tables together) are at most this many take this path.  Measured: a row
#: costs about 16 µs here and 2.5 µs through polars and Arrow, whose imports cost about 0.25 s of
#: CPU; below this many rows a single input is written sooner here (about 0.08 s at most).
SMALL_ROWS = 5_000

_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?")
_TIME_ONLY = re.compile(r"\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?")


class NotPlain(ValueError):
    """A timestamp's text that polars' parser must judge."""


def plain_timestamp(text: str | None) -> datetime | None:
    """The timestamp of ISO text as polars reads it (``%Y-%m-%dT%H:%M:%S%.f``, strict=False, to the
    microsecond: a longer fraction is cut; second 60 is the next minute's first); None for no text
    or a time without a date.  Raises :class:`NotPlain` for any other text."""
    if text is None or _TIME_ONLY.fullmatch(text):
        return None
    m = _ISO.fullmatch(text)
    if m is None:
        raise NotPlain(text)
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    us = int((m.group(7) or "")[:6].ljust(6, "0"))
    leap = s == 60
    try:
        at = datetime(y, mo, d, h, mi, 59 if leap else s, us)
    except ValueError:
        raise NotPlain(text) from None
    return at + timedelta(seconds=1) if leap else at


def startup_seconds(started: datetime | None, ready: datetime | None) -> float | None:
    """``ready - started`` in whole milliseconds (cut toward zero, as polars' ``total_milliseconds``)."""
    if started is None or ready is None:
        return None
    us = (ready - started) // timedelta(microseconds=1)
    ms = abs(us) // 1000 * (1 if us >= 0 else -1)
    return ms / 1000.0


def finished(table: str, cols: dict[str, list]) -> dict[str, list]:
    """The table's rows with their text timestamps parsed (and ``launches.startup_s``); raises
    :class:`NotPlain` when a text is not plainly ISO."""
    out = dict(cols)
    for name in TEXT_TIMESTAMPS.get(table, ()):
        out[name] = [plain_timestamp(v) for v in cols[name]]
    if table == "launches":
        out["startup_s"] = [startup_seconds(a, b) for a, b in zip(out["started_at"], out["ready_at"])]
    return out


def insert(con, table: str, cols: dict[str, list]) -> None:
    """``INSERT INTO table`` the rows: one typed list per column, unnested together."""
    kinds = TABLE_KINDS[table]
    names = list(kinds)
    # JSON is text until the column reads it (as it is for an Arrow string)
    lists = ", ".join(f"unnest(?::{'VARCHAR' if kinds[n] == 'json' else SQL_TYPES[kinds[n]]}[])" for n in names)
    con.execute(f"INSERT INTO {table} ({', '.join(names)}) SELECT {lists}", [cols[n] for n in names])


def row_count(tables: dict[str, dict[str, list]]) -> int:
    return sum(len(next(iter(cols.values()))) for cols in tables.values())


def insert_small(con, tables: dict[str, dict[str, list]]) -> bool:
    """Write the tables' rows through DuckDB alone when they are few (at most :data:`SMALL_ROWS`)
    and every timestamp is plain; False (nothing written) otherwise."""
    if row_count(tables) > SMALL_ROWS:
        return False
    try:
        ready = {table: finished(table, cols) for table, cols in tables.items() if next(iter(cols.values()))}
    except NotPlain:
        return False
    for table, cols in ready.items():
        insert(con, table, cols)
    return True


def values_sql(kinds: dict[str, str]) -> str:
    """``SELECT unnest(?::T[]) AS name, ...``: a relation of the columns ``kinds`` given as lists."""
    return "SELECT " + ", ".join(f"unnest(?::{SQL_TYPES[k]}[]) AS {n}" for n, k in kinds.items())


def as_lists(rows: Iterable[tuple], width: int) -> list[list]:
    """Rows as one list per column."""
    cols: list[list] = [[] for _ in range(width)]
    for row in rows:
        for i, v in enumerate(row):
            cols[i].append(v)
    return cols

"""``doctor``'s full read of the store file: every table, every column, and every index.

``count(*)`` reads no column, and a query reads only the columns and row groups it needs, so
a damaged block (its checksum no longer matches) can sit in a store that every command reads
without trouble, until an ingest touches it.  Here each table is read in full (a hash of
every value of every column), and each index (``CREATE INDEX`` and the ART behind each
PRIMARY KEY / UNIQUE constraint) is walked by looking up every key it holds (a lookup by an
indexed column goes through the index: a damaged index block fails it).  The reads share a
read-only connection for at most :data:`LEASE_S` seconds (opening one costs tens of
milliseconds), then take a new one, so that a writer waiting for the store gets its turn in
between; a read that fails gets the next one a fresh connection.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Index:
    name: str
    table: str
    columns: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"index {self.name} ({self.table}.{', '.join(self.columns)})"


def indexes(con) -> list[Index]:
    """The indexes of the store: ``CREATE INDEX`` ones and those of PRIMARY KEY / UNIQUE constraints."""
    out = []
    for name, table, exprs in con.execute(
        "SELECT index_name, table_name, expressions FROM duckdb_indexes() WHERE schema_name = 'main'"
    ).fetchall():
        cols = tuple(c.strip().strip('"') for c in str(exprs).strip("[]").split(","))
        if all(_NAME.match(c) for c in cols):  # an index on an expression is not walked
            out.append(Index(name, table, cols))
    for table, kind, cols in con.execute(
        "SELECT table_name, constraint_type, constraint_column_names FROM duckdb_constraints() "
        "WHERE schema_name = 'main' AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')"
    ).fetchall():
        out.append(Index(f"{kind.lower()} of {table}", table, tuple(cols)))
    return out


def read_table(con, table: str) -> None:
    """Every value of every column of ``table`` (raises on a damaged block)."""
    con.execute(f'SELECT count(*), bit_xor(hash(COLUMNS(*))) FROM "{table}"').fetchall()


#: Rows a batch of lookups may match: DuckDB scans an index for a filter that selects at most
#: ``index_scan_max_count`` (2,048) rows, else it reads the table instead.
LOOKUP_ROWS = 1000


def walk_index(con, index: Index) -> None:
    """Look up every key of ``index`` through it (raises on a damaged index block): in batches of
    keys that match about :data:`LOOKUP_ROWS` rows (one key at a time for a key of several columns)."""
    cols = ", ".join(f'"{c}"' for c in index.columns)
    known = " AND ".join(f'"{c}" IS NOT NULL' for c in index.columns)
    keys = con.execute(f'SELECT DISTINCT {cols} FROM "{index.table}" WHERE {known}').fetchall()
    if not keys:
        return
    if len(index.columns) > 1:
        where = " AND ".join(f'"{c}" = ?' for c in index.columns)
        for key in keys:
            con.execute(f'SELECT count(*) FROM "{index.table}" WHERE {where}', list(key)).fetchall()
        return
    rows = con.execute(f'SELECT count(*) FROM "{index.table}" WHERE {known}').fetchall()[0][0]
    batch = max(1, min(LOOKUP_ROWS, LOOKUP_ROWS * len(keys) // max(rows, 1)))
    for i in range(0, len(keys), batch):
        part = [k[0] for k in keys[i : i + batch]]
        marks = ", ".join("?" * len(part))
        con.execute(f'SELECT count(*) FROM "{index.table}" WHERE {cols} IN ({marks})', part).fetchall()


#: What to do about a damaged table (its rows in the damaged block cannot be read, by export either).
TABLE_HINT = (
    "a table is damaged: its rows in the damaged block cannot be read (export stops there too); ingest "
    "the logs again into a new store ('logparse ingest --db NEW.duckdb LOGS...') or restore a copy of the store"
)


#: How long consecutive reads share one connection before the next read takes a new one.
LEASE_S = 0.5


class ReadLease:
    """Read-only connections from ``connect()`` (a context manager), each kept for the reads of at
    most :data:`LEASE_S` seconds; :meth:`close` ends the current one (the next read opens another)."""

    def __init__(self, connect: Callable[[], AbstractContextManager]) -> None:
        self.connect = connect
        self.held: AbstractContextManager | None = None
        self.con = None
        self.since = 0.0

    def get(self):
        if self.held is not None and time.monotonic() - self.since > LEASE_S:
            self.close()
        if self.held is None:
            held = self.connect()
            self.con = held.__enter__()
            self.held, self.since = held, time.monotonic()
        return self.con

    def close(self) -> None:
        if self.held is not None:
            held, self.held, self.con = self.held, None, None
            held.__exit__(None, None, None)


def damaged_parts(connect: Callable[[], AbstractContextManager], tables: list[str]) -> list[str]:
    """What of the store cannot be read in full: ``"table events cannot be read in full: <DuckDB's
    error>"`` per table or index (the indexes of a damaged table are not walked: their keys cannot
    be read).  ``connect()``: a fresh read-only connection (a context manager)."""
    problems = []
    damaged = set()
    lease = ReadLease(connect)
    try:
        for table in tables:
            why = _failure(read_table, lease.get(), table)
            if why:
                lease.close()
                damaged.add(table)
                problems.append(f"table {table} cannot be read in full: {why}")
        found = [ix for ix in indexes(lease.get()) if ix.table not in damaged]  # a damaged table's keys cannot be read
        for index in found:
            why = _failure(walk_index, lease.get(), index)
            if why:
                lease.close()
                problems.append(f"{index.label} is damaged: {why}")
    finally:
        lease.close()
    return problems


def _failure(read, con, what) -> str | None:
    """DuckDB's error (the first one) when ``read(con, what)`` fails, else None."""
    import duckdb

    from logparse.store.db import root_error, short_error

    try:
        read(con, what)
    except duckdb.Error as exc:
        return short_error(root_error(exc))
    return None

"""Export to Parquet, and import of exports and other stores (fleet merge).

``export DIR`` writes one directory per table, hive-partitioned by host and month::

    DIR/logparse-export.json
    DIR/launches/host=gpu-node-1/month=2026-05/data_0.parquet
    DIR/events/host=gpu-node-1/month=2026-05/data_0.parquet
    ...

``month`` is the launch's start month, ``unknown`` for a launch whose log gives no date (an old
release prints times of day only): the day it was ingested is no month of the launch.  Sources
(and their unrecognized lines) are partitioned by the month they were ingested.  A missing host
is written as ``__HIVE_DEFAULT_PARTITION__``, which DuckDB and polars read back as null.
DuckDB reads a table with ``read_parquet('DIR/launches/**/*.parquet', hive_partitioning=true)``
and polars with ``pl.read_parquet('DIR/launches/**/*.parquet', hive_partitioning=True)``;
Spark with ``spark.read.parquet('DIR/launches')`` (``tests/test_spark.py``; the README's *The
fleet* shows a query).

``ingest`` accepts such a directory, or another store's ``.duckdb`` file: its sources
are copied and its launches merged like any input (idempotent: importing twice, or
importing a store that holds launches this one already has, changes nothing).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from logparse.store import changes, schema
from logparse.store import db as dbm
from logparse.store.tally import Step

MARKER = "logparse-export.json"
EXPORT_TABLES = (
    "sources",
    "launches",
    "rank_memory",
    "events",
    "runtime_stats",
    "unrecognized",
    "launch_sources",
    "launch_args",
    "launch_budget",
    "rank_budget",
    "launch_aliases",
)

#: The partition month of a launch's rows: its start month, or ``unknown`` (never the export's month).
UNDATED = "unknown"
_MONTH = "coalesce(strftime({t}started_at, '%Y-%m'), '" + UNDATED + "')"

#: table -> SELECT giving the table's rows plus the partition columns ``host`` and ``month``.
_EXPORT_SQL = {
    "sources": "SELECT *, strftime(ingested_at, '%Y-%m') AS month FROM sources",
    "launches": f"SELECT *, {_MONTH.format(t='')} AS month FROM launches",
    "unrecognized": "SELECT u.*, s.host, strftime(s.ingested_at, '%Y-%m') AS month FROM unrecognized u "
    "LEFT JOIN sources s USING (source_id)",
}
#: Tables whose rows belong to a launch: partitioned by the launch's host and month.
_LAUNCH_ROW_TABLES = [t for t in EXPORT_TABLES if t not in _EXPORT_SQL]
for _t in _LAUNCH_ROW_TABLES:
    _EXPORT_SQL[_t] = (
        f"SELECT c.*, l.host, {_MONTH.format(t='l.')} AS month FROM {_t} c LEFT JOIN launches l USING (launch_id)"
    )


def is_export_dir(path: Path) -> bool:
    return path.is_dir() and (path / MARKER).is_file()


def is_duckdb_file(path: Path) -> bool:
    if not path.is_file():
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(12)
    except OSError:
        return False
    return head[8:12] == b"DUCK"


def export(con, directory: Path, on_table: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Write every table as hive-partitioned Parquet under ``directory`` (replacing an earlier export);
    ``on_table(table, rows)`` is told of each table once it is written (progress)."""
    directory = Path(directory)
    if directory.exists():
        if not directory.is_dir():
            raise ValueError(f"{directory} exists and is not a directory")
        if any(directory.iterdir()) and not is_export_dir(directory):
            raise ValueError(f"{directory} is not empty and holds no logparse export: give a new or empty directory")
    tmp = directory.with_name(f".{directory.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    counts: dict[str, int] = {}
    try:
        for table in EXPORT_TABLES:
            n = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
            counts[table] = int(n)
            if not n:
                continue
            target = str(tmp / table).replace("'", "''")
            con.execute(f"COPY ({_EXPORT_SQL[table]}) TO '{target}' (FORMAT parquet, PARTITION_BY (host, month))")
            if on_table is not None:
                on_table(table, int(n))
        version = con.execute("SELECT max(version) FROM schema_version").fetchall()[0][0]
        from logparse import __version__

        (tmp / MARKER).write_text(
            json.dumps(
                {
                    "format": "logparse-export",
                    "schema_version": int(version),
                    "logparse_version": __version__,
                    "exported_at": datetime.now().isoformat(timespec="seconds"),
                    "rows": counts,
                    "partitioning": ["host", "month"],
                },
                indent=2,
            )
            + "\n"
        )
        if directory.exists():
            old = directory.with_name(f".{directory.name}.old-{os.getpid()}")
            directory.rename(old)
            tmp.rename(directory)
            shutil.rmtree(old, ignore_errors=True)
        else:
            directory.parent.mkdir(parents=True, exist_ok=True)
            tmp.rename(directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return counts


# ---------------------------------------------------------------------------- import


def open_foreign(path: Path, lock_timeout: float = dbm.DEFAULT_LOCK_TIMEOUT):
    """A read-only DuckDB connection over another store or an export (tables by their usual names)."""
    import duckdb

    path = Path(path)
    if is_export_dir(path):
        meta = json.loads((path / MARKER).read_text())
        ver = int(meta.get("schema_version", 0))
        if ver > schema.SCHEMA_VERSION:
            raise dbm.StoreTooNew(
                f"{path} was exported by a newer logparse (schema version {ver}; this logparse knows "
                f"up to {schema.SCHEMA_VERSION}): upgrade logparse to import it"
            )
        con = duckdb.connect()
        schema.create_current(con)  # empty tables of the current schema
        for table in EXPORT_TABLES:
            files = list((path / table).glob("**/*.parquet")) if (path / table).is_dir() else []
            if files:
                glob = str(path / table / "**" / "*.parquet").replace("'", "''")
                con.execute(f"DROP TABLE {table}")
                con.execute(
                    f"CREATE VIEW {table} AS SELECT * EXCLUDE (month) FROM read_parquet('{glob}', "
                    "hive_partitioning = true, union_by_name = true, "
                    "hive_types = {'host': 'VARCHAR', 'month': 'VARCHAR'})"
                )
        return con
    dbm.check_file(path)
    con = dbm.connect_file(path, True, lock_timeout, None)  # waits for a writer, like our own store
    try:
        version = dbm.schema_version_of(con)
    except duckdb.Error as exc:
        con.close()
        raise dbm.StoreCorrupt(f"{path}: cannot read this store to import it ({dbm.short_error(exc)})") from None
    if version is None:
        con.close()
        raise dbm.StoreCorrupt(f"{path} is a DuckDB database but not a logparse store")
    if version > schema.SCHEMA_VERSION:
        con.close()
        raise dbm.StoreTooNew(
            f"{path} was written by a newer logparse (schema version {version}; this logparse knows "
            f"up to {schema.SCHEMA_VERSION}): upgrade logparse to import it"
        )
    return con


def _columns(con, table: str) -> list[str]:
    return [r[0] for r in con.execute(f"SELECT * FROM {table} LIMIT 0").description]


def import_store(path: Path, foreign_path: Path, opts, *, batch: int = 200):
    """Merge another store (or an export) into the store at ``path``, in one transaction."""
    from logparse.store.ingest_types import SourceOutcome

    foreign_path = Path(foreign_path)
    if not is_export_dir(foreign_path) and path.exists() and foreign_path.resolve() == path.resolve():
        raise ValueError(f"{foreign_path} is the store itself")
    fcon = open_foreign(foreign_path, opts.lock_timeout)
    now = datetime.now()
    try:
        ids = [
            r[0]
            for r in fcon.execute(
                "SELECT launch_id FROM launches ORDER BY started_at NULLS FIRST, launch_id"
            ).fetchall()
        ]
        links = _foreign_links(fcon)
        with (
            dbm.connection(path, write=True, lock_timeout=opts.lock_timeout, create=True) as con,
            dbm.transaction(con),
        ):
            new_sources = _import_sources(con, fcon)
            _import_unrecognized(con, fcon, new_sources)
            merged = _import_launches(con, fcon, ids, opts, batch=batch, now=now)
            _import_links(con, links, merged.final_of)
            # each launch's change, once for the whole merge (per batch it recomputed the same deployments)
            changes.refresh(con, None)
    finally:
        fcon.close()
    status = "imported"
    return SourceOutcome.of(
        str(foreign_path),
        status,
        merged.lineage,
        message=f"merged {len(ids)} launch(es) from another store",
    )


@dataclass
class _Merged:
    """What merging the foreign launches did."""

    lineage: list[Step] = field(default_factory=list)  #: what each batch did (see :mod:`.tally`)
    final_of: dict[str, str] = field(default_factory=dict)  #: a foreign launch id -> its id in this store


def _import_sources(con, fcon) -> list[str]:
    """Copy the foreign sources this store does not have; their ids."""
    ours = _columns(con, "sources")
    theirs = set(_columns(fcon, "sources"))
    cols = [c for c in ours if c in theirs]
    src_tbl = fcon.sql(f"SELECT {', '.join(cols)} FROM sources").to_arrow_table() if cols else None
    new_sources: list[str] = []
    if src_tbl is not None and src_tbl.num_rows:
        con.register("_isrc", src_tbl)
        try:
            new_sources = [
                r[0]
                for r in con.execute(
                    "SELECT DISTINCT source_id FROM _isrc WHERE source_id NOT IN (SELECT source_id FROM sources)"
                ).fetchall()
            ]
            con.execute(
                f"INSERT INTO sources BY NAME SELECT {', '.join(cols)} FROM _isrc WHERE source_id "
                "NOT IN (SELECT source_id FROM sources)"
            )
        finally:
            con.unregister("_isrc")
    return new_sources


def _import_unrecognized(con, fcon, new_sources: list[str]) -> None:
    """Copy the unrecognized lines of the sources just copied."""
    if not new_sources:
        return
    un = fcon.sql(
        "SELECT source_id, line_no, reason, text FROM unrecognized WHERE source_id IN (SELECT unnest(?::VARCHAR[]))",
        params=[new_sources],
    ).to_arrow_table()
    if un.num_rows:
        con.register("_iun", un)
        try:
            con.execute("INSERT INTO unrecognized BY NAME SELECT * FROM _iun")
        finally:
            con.unregister("_iun")


def _import_launches(con, fcon, ids: list[str], opts, *, batch: int, now: datetime) -> _Merged:
    """Merge the foreign launches, ``batch`` at a time, like any ingested input: the counts, and
    the id each foreign launch ended up under (``final_of``)."""
    from logparse.store.items import Item, is_continuation
    from logparse.store.load import fetch_launches
    from logparse.store.merge import apply_items
    from logparse.store.runtime import BatchSpan

    merged = _Merged()
    for start in range(0, len(ids), batch):
        chunk = ids[start : start + batch]
        loaded = fetch_launches(fcon, chunk)
        items = []
        for lid in chunk:
            if lid not in loaded:
                continue
            launch, meta = loaded[lid]
            items.append(
                Item(
                    events=list(launch.events),
                    stream=(launch.host, launch.unit, launch.boot, launch.pid),
                    launch=launch,
                    meta=meta,
                    continuation=is_continuation(launch.events),
                    span=BatchSpan.from_runtime(launch.runtime, meta.batch_edges),
                )
            )
        res = apply_items(con, items, source_id=None, opts=opts, now=now, with_changes=False)
        merged.lineage += res.lineage
        merged.final_of.update(res.final_of)
    return merged


def _foreign_links(fcon) -> list[tuple]:
    """The other store's ``launch_sources`` rows: (launch, source, first line, last line); a store
    older than the line ranges has none."""
    have = set(_columns(fcon, "launch_sources"))
    ranges = "first_line, last_line" if {"first_line", "last_line"} <= have else "NULL, NULL"
    return fcon.execute(f"SELECT launch_id, source_id, {ranges} FROM launch_sources").fetchall()


def _import_links(con, links: list[tuple], final_of: dict[str, str]) -> None:
    """Link the merged launches to their sources, with their line ranges (under the id each launch
    ended up with: a later batch may have merged it again, its earlier id then an alias)."""
    from logparse.store.launch_sources import merge_ranges, write_ranges

    if not links:
        return
    alias = dict(con.execute("SELECT alias, launch_id FROM launch_aliases").fetchall())
    live = {r[0] for r in con.execute("SELECT launch_id FROM launches").fetchall()}
    per: dict[str, dict] = {}
    for lid, sid, lo, hi in links:
        final = final_of.get(lid, lid)
        final = final if final in live else alias.get(final, alias.get(lid, final))
        if final in live:
            per[final] = merge_ranges(per.get(final, {}), {sid: (lo, hi)})
    have: dict[str, dict] = {}
    for lid, sid, lo, hi in con.execute(
        "SELECT launch_id, source_id, first_line, last_line FROM launch_sources WHERE launch_id IN "
        "(SELECT unnest(?::VARCHAR[]))",
        [sorted(per)],
    ).fetchall():
        have.setdefault(lid, {})[sid] = (lo, hi)
    write_ranges(con, {lid: merge_ranges(have.get(lid, {}), r) for lid, r in per.items()})

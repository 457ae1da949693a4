"""Rebuilding stored launches from their events: the one-time move to the current identity
scheme, deployment key and launch budget (schema migration 4).

Every stored launch is loaded (:func:`logparse.store.load.fetch_launches`), given the id of the
current scheme (:mod:`logparse.launches.identity`; its old id stays an alias, so references to it
still resolve), its deployment key and its budget, and written back through the same frames an
ingest writes.  Rows that an older logparse stored twice under one id are folded into one first.
"""

from __future__ import annotations

from logparse.launches.identity import launch_id as identity_id
from logparse.store import columns as C
from logparse.store import sequence
from logparse.store.frames import frames
from logparse.store.load import fetch_launches
from logparse.store.rows import values_sql

#: Tables holding the rows of one launch (``launch_sources`` is relinked, not rewritten).
LAUNCH_TABLES = ("launches", "rank_memory", "events", "runtime_stats", "launch_args", "launch_budget", "rank_budget")
_UNIQUE_ROWS = {
    "launches": "launch_id",
    "rank_memory": "launch_id, rank_idx",
    "events": "launch_id, seq",
    "runtime_stats": "launch_id",
}
BATCH = 300


def fold_duplicates(con) -> int:
    """Keep one row per key where an older store wrote a launch id more than once."""
    dup = con.execute(
        "SELECT count(*) FROM (SELECT launch_id FROM launches GROUP BY launch_id HAVING count(*) > 1)"
    ).fetchall()[0][0]
    for table, key in _UNIQUE_ROWS.items():
        con.execute(f"DELETE FROM {table} WHERE rowid NOT IN (SELECT max(rowid) FROM {table} GROUP BY {key})")
    return int(dup)


def _ordinals(con) -> dict[str, int]:
    rows = con.execute(
        "SELECT launch_id, row_number() OVER (PARTITION BY source_id ORDER BY first_line NULLS LAST, launch_id) "
        "FROM launches"
    ).fetchall()
    return {lid: int(n) for lid, n in rows}


def rebuild_all(con) -> None:
    """Rewrite every stored launch with its current id, deployment and budget (inside a transaction)."""
    fold_duplicates(con)
    ordinals = _ordinals(con)
    ids = sorted(ordinals)
    taken: set[str] = set()
    for start in range(0, len(ids), BATCH):
        chunk = ids[start : start + BATCH]
        loaded = fetch_launches(con, chunk)
        launches, metas, aliases = [], [], []
        for old in chunk:
            if old not in loaded:
                continue
            launch, meta = loaded[old]
            launch.source_ordinal = ordinals.get(old)
            new = identity_id(launch)
            if new in taken:  # the same start stored twice under two old ids: keep the first
                aliases.append((old, new))
                continue
            taken.add(new)
            launch.launch_id = new
            launches.append(launch)
            metas.append(meta)
            if new != old:
                aliases.append((old, new))
        for table in LAUNCH_TABLES:
            con.execute(f"DELETE FROM {table} WHERE launch_id IN (SELECT unnest(?::VARCHAR[]))", [chunk])
        for table, df in frames(launches, metas).items():
            if df.height:
                # the columns this migration's tables have (a later migration adds and fills the rest)
                have = {r[0] for r in con.execute(f"SELECT * FROM {table} LIMIT 0").description}
                con.register("_rows", df.select([c for c in df.columns if c in have]).to_arrow())
                try:
                    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows")
                finally:
                    con.unregister("_rows")
        if aliases:
            add_aliases(con, aliases, reason="identity scheme v2 (migration 4)")
            relink_sources(con, dict(aliases))
    sequence.refresh(con, with_changes=False)  # launch_change is a later migration's, filled after them


def add_aliases(con, pairs: list[tuple[str, str]], reason: str) -> None:
    """Remember ``alias -> launch_id`` (re-pointing aliases of ids that are now aliases themselves)."""
    pairs = [(a, b) for a, b in dict(pairs).items() if a != b]
    if not pairs:
        return
    alias = values_sql({"alias": "str", "launch_id": "str", "reason": "str"})
    cols = [[a for a, _ in pairs], [b for _, b in pairs], [reason] * len(pairs)]
    con.execute(
        f"UPDATE launch_aliases SET launch_id = n.launch_id FROM ({alias}) n WHERE launch_aliases.launch_id = n.alias",
        cols,
    )
    con.execute("DELETE FROM launch_aliases WHERE alias IN (SELECT unnest(?::VARCHAR[]))", [cols[0]])
    con.execute(
        f"INSERT INTO launch_aliases (alias, launch_id, reason) SELECT alias, launch_id, reason FROM ({alias}) "
        "WHERE alias NOT IN (SELECT launch_id FROM launches)",
        cols,
    )


def relink_sources(con, new_of: dict[str, str]) -> None:
    import pyarrow as pa

    if not new_of:
        return
    con.register("_map", pa.table({"old": list(new_of), "new": list(new_of.values())}))
    try:
        con.execute(
            "CREATE TEMP TABLE _links AS SELECT DISTINCT coalesce(m.new, s.launch_id) AS launch_id, s.source_id "
            "FROM launch_sources s LEFT JOIN _map m ON m.old = s.launch_id"
        )
        con.execute("DELETE FROM launch_sources")
        con.execute("INSERT INTO launch_sources SELECT launch_id, source_id FROM _links")
        con.execute("DROP TABLE _links")
    finally:
        con.unregister("_map")


def create_tables_v4(con) -> None:
    C.add_missing_columns(con, "launches", C.launch_columns())
    C.add_missing_columns(con, "events", C.EVENT_COLUMNS)
    con.execute(C.create_table_sql("launch_budget", C.budget_columns(), key="launch_id"))
    con.execute(C.create_table_sql("rank_budget", C.rank_budget_columns()))
    con.execute(
        "CREATE TABLE launch_aliases (alias VARCHAR NOT NULL PRIMARY KEY, launch_id VARCHAR NOT NULL, reason VARCHAR)"
    )
    con.execute(
        "CREATE TABLE launch_sequence (launch_id VARCHAR NOT NULL PRIMARY KEY, deployment VARCHAR, "
        "launch_no BIGINT, prev_launch_id VARCHAR)"
    )

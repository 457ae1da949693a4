"""The history store's schema: tables, views and forward migrations.

Table and column names are a contract for users' SQL: later versions add tables and
columns, never rename or drop them.  Units: every ``*_gb`` column of device memory is
GiB (what SGLang prints as "GB"); ``hicache_host_gb`` is decimal GB, as SGLang prints it.
Timestamps are naive (SGLang prints local time; an outer layer such as journald gives UTC
when SGLang's own line has no date); the exact text from the log is kept beside them
(``*_text`` columns).

Migrations are a list of functions; migration ``i`` (1-based) brings a store from schema
version ``i - 1`` to ``i``.  A store whose version is higher than ``len(MIGRATIONS)`` was
written by a newer logparse and is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from logparse.data import tables
from logparse.launches.args import IGNORED_ARGS, IGNORED_PORTS
from logparse.store.changes import HISTORY_METRICS

# The statements are SQL files (``grammars/sql/``, read by :func:`logparse.data.tables.sql`), byte for
# byte what each migration executed; a released migration's files are frozen (their column lists too):
#
# * ``tables_v1.sql``, ``tables_v2.sql``: the tables migrations 1 and 2 created;
# * ``launch_summary_v3.sql``, ``history_v3.sql``: the views as migrations 2 and 3 left them (the
#   23 metrics ``history`` compared then);
# * ``launch_change_v9.sql``: ``launch_change`` as migration 9 created it (its metric columns: a
#   later metric is a later migration's column);
# * ``pending_pieces_v10.sql``: ``pending_pieces`` as migration 10 created it (:mod:`logparse.store.pending`);
# * ``launch_summary.sql``, ``history.sql``: the current views, recreated after every run of migrations.
#
# ``history.sql`` is the ``history`` view: each launch's summary, its place in its deployment
# (``launch_sequence``) and its change against the previous launch, persisted in ``launch_change``
# when the launches change (:mod:`logparse.store.changes`), so reading it computes no window and no
# argument diff.  Its ``{metrics}`` and ``{metric_cols}`` are filled from :data:`HISTORY_METRICS`
# (the columns keep their order).


def _history_view() -> str:
    metric_cols = ",\n    ".join(f"s.{m}, c.{m}_change" for m in HISTORY_METRICS)
    return tables.sql("history").format(metrics=", ".join(HISTORY_METRICS), metric_cols=metric_cols)


def create_views(con) -> None:
    con.execute(tables.sql("launch_summary"))
    con.execute(_history_view())


def _views_v3(con) -> None:
    """The views as migrations 2 and 3 left them (kept so that those migrations stay what they were)."""
    con.execute(tables.sql("launch_summary_v3"))
    con.execute(tables.sql("history_v3"))


# ---------------------------------------------------------------------------- migrations


def _m1_tables(con) -> None:
    for stmt in tables.sql("tables_v1").split(";"):
        if stmt.strip():
            con.execute(stmt)


def _m2_args_and_views(con) -> None:
    """Per-argument table (backfilled from ``launches.server_args``), the noise list, the views."""
    for stmt in tables.sql("tables_v2").split(";"):
        if stmt.strip():
            con.execute(stmt)
    from logparse.store.rows import values_sql

    names = list(IGNORED_ARGS)
    ignored = values_sql({"name": "str", "reason": "str"})
    con.execute(
        f"INSERT INTO ignored_args SELECT name, reason FROM ({ignored})", [names, [IGNORED_ARGS[n] for n in names]]
    )
    rows = con.execute("SELECT launch_id, server_args::VARCHAR FROM launches WHERE server_args IS NOT NULL").fetchall()
    if rows:  # (polars only for a store that has launches)
        from logparse.store.frames import args_frame

        frame = args_frame([(lid, json.loads(sa), None, None) for lid, sa in rows])
        if frame.height:
            con.register("_args", frame.to_arrow())
            con.execute("INSERT INTO launch_args (launch_id, name, value) SELECT launch_id, name, value FROM _args")
            con.unregister("_args")
    _views_v3(con)


def _m3_views_kv_tokens_fallback(con) -> None:
    """launch_summary/history: kv_tokens falls back to max_total_num_tokens (releases without a KV line)."""
    _views_v3(con)


def _m4_one_truth(con) -> None:
    """The launch budget persisted (``launch_budget``, ``rank_budget``), launch ids of the identity scheme
    v2 (old ids kept in ``launch_aliases``), deployment keys with the engine, ``launch_sequence``, the
    engine and identity columns of ``launches``, ``events.record_ts``; ``launch_id`` made a key."""
    from logparse.store import rebuild

    rebuild.create_tables_v4(con)
    rebuild.rebuild_all(con)
    con.execute("ALTER TABLE launches ADD PRIMARY KEY (launch_id)")


def _m5_history_release_fields(con) -> None:
    """history: fields printed by one launch only (a release added or removed them) are counted in
    ``fields_added`` / ``fields_removed`` / ``release_fields_change``, not listed as changed arguments.
    Views only: they are recreated after every run of migrations (:func:`finish_migrations`)."""


def _m6_role_other_units(con) -> None:
    """``launches.role`` (the prefill/decode role of a disaggregated server) and ``sources.other_units``
    (lines of other units of a journal, counted apart from SGLang's).  Frozen: the columns this
    migration adds are named here, their kinds come from the declarations."""
    from logparse.store import columns as C

    C.add_missing_columns(con, "launches", {k: v for k, v in C.launch_columns().items() if k == "role"})
    C.add_missing_columns(con, "sources", {"other_units": "int"})


def _m7_argument_origins(con) -> None:
    """``launch_args.origin`` (release default, derived by SGLang, or set: logparse.launches.args), so
    ``history`` tells a value the user set from a release default that moved; the port arguments of
    later releases join ``ignored_args``."""
    from logparse.launches.args import origin
    from logparse.store.rows import values_sql

    con.execute("ALTER TABLE launch_args ADD COLUMN origin VARCHAR")
    rows = con.execute(
        "SELECT a.launch_id, a.name, a.value::VARCHAR, l.version_min, l.version_max FROM launch_args a "
        "JOIN launches l USING (launch_id)"
    ).fetchall()
    if rows:
        import pyarrow as pa

        origins = [origin(n, json.loads(v) if v else None, (lo, hi) if lo and hi else None) for _, n, v, lo, hi in rows]
        con.register(
            "_o", pa.table({"launch_id": [r[0] for r in rows], "name": [r[1] for r in rows], "origin": origins})
        )
        con.execute(
            "UPDATE launch_args SET origin = o.origin FROM _o o WHERE launch_args.launch_id = o.launch_id "
            "AND launch_args.name = o.name"
        )
        con.unregister("_o")
    names = list(IGNORED_PORTS)
    ports = values_sql({"name": "str", "reason": "str"})
    con.execute(
        f"INSERT INTO ignored_args SELECT name, reason FROM ({ports}) WHERE name NOT IN (SELECT name FROM ignored_args)",
        [names, [IGNORED_PORTS[n] for n in names]],
    )


#: Launch columns migration 8 adds (vLLM as a second engine), named here so that it stays what it was.
_M8_LAUNCH_COLUMNS = (
    "engine_version",
    "engine_version_range",
    "engine_generation",
    "gpu_memory_utilization",
    "gpu_memory_utilization_source",
    "max_model_len",
    "num_gpu_blocks",
    "block_size",
    "kv_tokens",
    "kv_tokens_definition",
    "max_concurrency",
    "max_concurrency_tokens",
    "error_kind",
)


def _m8_engines(con) -> None:
    """vLLM as a second engine: the engine's version (``engine_version``/``engine_version_range``, the
    SGLang ones copied for existing launches), the generation and KV figures vLLM prints (``launches``),
    the activation peak and non-torch memory per rank (``rank_memory``).  Kinds come from the declarations."""
    from logparse.store import columns as C

    launch_cols = C.launch_columns()
    C.add_missing_columns(con, "launches", {k: launch_cols[k] for k in _M8_LAUNCH_COLUMNS})
    rank_cols = C.rank_columns()
    C.add_missing_columns(con, "rank_memory", {k: rank_cols[k] for k in ("activation_gb", "non_torch_gb")})
    con.execute(
        "UPDATE launches SET engine_version = sglang_version, engine_version_range = sglang_version_range "
        "WHERE coalesce(engine, 'sglang') = 'sglang' AND engine_version IS NULL AND engine_version_range IS NULL"
    )


def _m9_launch_change(con) -> None:
    """``launch_change``: each launch's change against the previous launch of its deployment (the
    metrics' changes, the SGLang version and argument changes), which the ``history`` view computed
    with a window and an argument diff on every read.  Filled, like every derived table, after the
    migrations ran (:func:`logparse.store.db.migrate`), and refreshed with ``launch_sequence``.
    And an index of ``events`` by launch: a report reads one launch's events, which without it
    decompressed the whole table (most of ``show``'s own time on a large store)."""
    con.execute("CREATE INDEX events_launch_id ON events (launch_id)")
    con.execute(tables.sql("launch_change_v9"))


def _m10_order_free(con) -> None:
    """The store no longer depends on the order of its inputs: ``launch_sources`` gains each source's
    ``first_line`` / ``last_line`` of the launch (filled from the events each source still holds);
    ``pending_pieces`` keeps pieces of launches whose start is not in the store yet;
    ``launch_sequence.same_start_as`` marks another copy of a start (not a restart)."""
    con.execute("ALTER TABLE launch_sources ADD COLUMN first_line BIGINT")
    con.execute("ALTER TABLE launch_sources ADD COLUMN last_line BIGINT")
    con.execute(
        "UPDATE launch_sources SET first_line = e.lo, last_line = e.hi FROM (SELECT launch_id, source_id, "
        "min(line_no) AS lo, max(line_no) AS hi FROM events GROUP BY launch_id, source_id) e "
        "WHERE launch_sources.launch_id = e.launch_id AND launch_sources.source_id = e.source_id"
    )
    con.execute(tables.sql("pending_pieces_v10"))
    con.execute("ALTER TABLE launch_sequence ADD COLUMN same_start_as VARCHAR")


def _m11_outcome_evidence(con) -> None:
    """``launches.outcome_evidence``: which line decided the launch's outcome and why (a launch stored
    before stays NULL until it is ingested again).  Frozen: the column is named here."""
    from logparse.store import columns as C

    C.add_missing_columns(con, "launches", {"outcome_evidence": "str"})


def _m12_time_zones(con) -> None:
    """Launches keep the UTC offset of their times when the input printed a zone (``time_zone``,
    ``+00:00``: :mod:`logparse.launches.times`).  A stored launch whose start is its record's own
    time, from a format that prints the zone, is UTC; the others stay without a zone.  Frozen: the
    column is named here."""
    from logparse.sources.timestamps import ZONED_FORMATS
    from logparse.store import columns as C

    C.add_missing_columns(con, "launches", {"time_zone": "str"})
    con.execute(
        "UPDATE launches SET time_zone = '+00:00' WHERE record_started_at IS NOT NULL "
        "AND started_at = TRY_CAST(record_started_at AS TIMESTAMP) "
        "AND source_id IN (SELECT source_id FROM sources WHERE format IN (SELECT unnest(?::VARCHAR[])))",
        [sorted(ZONED_FORMATS)],
    )


def _m13_budgets_of_this_model(con) -> None:
    """Every stored launch's budget (``launch_budget``, ``rank_budget``) recomputed by this release's
    budget model, so that the store's views say what ``explain`` computes from the same launch: old
    releases' KV pool from their pool lines, the post-capture pool as the last count, the multimodal
    reservation, DeepSeek-V4's pools and vLLM's CUDA-graph estimate changed the figures of launches
    stored before.  Not frozen, as migration 4: it writes the rows of the current model."""
    from logparse.store import rebuild

    rebuild.rebuild_all(con)


def _m14_secrets_redacted(con) -> None:
    """Secrets that an older logparse stored (``api_key='sk-…'`` in lines, arguments and payloads)
    replaced by their fingerprints, as this release stores them (:mod:`logparse.sources.redact`):
    every text column of every table, read in Python only where a cheap SQL test finds a hint of
    one (a new or clean store registers no function: DuckDB's Python functions import numpy)."""
    from logparse.sources import redact

    hint = " OR ".join(f"contains(lower(c), '{h}')" for h in redact.HINTS)
    text_columns = con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE schema_name = 'main' "
        "AND NOT internal AND data_type IN ('VARCHAR', 'JSON') AND table_name IN "
        "(SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main') "
        "AND table_name NOT IN ('schema_version', 'ignored_args')"  # names and reasons, never a value
    ).fetchall()
    tables = sorted({table for table, _ in text_columns})
    if not tables or con.execute(" UNION ALL ".join(f"(SELECT 1 FROM {t} LIMIT 1)" for t in tables)).fetchone() is None:
        return  # a new store: nothing stored, nothing to redact
    wheres = [(table, column, hint.replace("c)", f'"{column}"::VARCHAR)')) for table, column in text_columns]
    # one query for every column (a query each cost a quarter of a second on a new store)
    hinted = " UNION ALL ".join(
        f"SELECT {k} AS k, count(*) AS n FROM {table} WHERE {where}" for k, (table, _, where) in enumerate(wheres)
    )
    found = {k for k, n in con.execute(hinted).fetchall() if n} if wheres else set()
    updates = [
        f'UPDATE {table} SET "{column}" = logparse_redact("{column}"::VARCHAR) WHERE {where}'
        for k, (table, column, where) in enumerate(wheres)
        if k in found
    ]
    args = "WHERE value IS NOT NULL AND regexp_full_match(name, ?)"
    if not updates and not con.execute(f"SELECT count(*) FROM launch_args {args}", [redact.NAMES]).fetchall()[0][0]:
        return
    con.create_function("logparse_redact", redact.redact, ["VARCHAR"], "VARCHAR")
    con.create_function("logparse_redact_value", redact.redact_value, ["VARCHAR", "VARCHAR"], "VARCHAR")
    for sql in updates:
        con.execute(sql)
    con.execute(f"UPDATE launch_args SET value = logparse_redact_value(name, value::VARCHAR) {args}", [redact.NAMES])
    con.remove_function("logparse_redact")
    con.remove_function("logparse_redact_value")


def _m15_model_configs(con) -> None:
    """``model_configs``: the models' configs met among the inputs (:mod:`logparse.store.model_configs`).
    Frozen: the statement is written here."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS model_configs (path VARCHAR PRIMARY KEY, model_name VARCHAR, "
        "model_type VARCHAR, content VARCHAR, index_total BIGINT, sha256 VARCHAR, ingested_at TIMESTAMP)"
    )


#: Forward migrations, oldest first.  Never edit a released one: append a new one.
MIGRATIONS: list[Callable] = [
    _m1_tables,
    _m2_args_and_views,
    _m3_views_kv_tokens_fallback,
    _m4_one_truth,
    _m5_history_release_fields,
    _m6_role_other_units,
    _m7_argument_origins,
    _m8_engines,
    _m9_launch_change,
    _m10_order_free,
    _m11_outcome_evidence,
    _m12_time_zones,
    _m13_budgets_of_this_model,
    _m14_secrets_redacted,
    _m15_model_configs,
]
SCHEMA_VERSION = len(MIGRATIONS)

#: Tables every store of the current version holds (``doctor`` checks them).
TABLES = (
    "schema_version",
    "sources",
    "launches",
    "rank_memory",
    "events",
    "runtime_stats",
    "unrecognized",
    "journal_cursors",
    "launch_sources",
    "launch_args",
    "ignored_args",
    "launch_budget",
    "rank_budget",
    "launch_aliases",
    "launch_sequence",
    "launch_change",
    "pending_pieces",
)
VIEWS = ("launch_summary", "history")
#: Tables whose rows belong to one launch (referential integrity).
LAUNCH_CHILD_TABLES = (
    "rank_memory",
    "events",
    "runtime_stats",
    "launch_sources",
    "launch_args",
    "launch_budget",
    "rank_budget",
    "launch_sequence",
    "launch_change",
)


def finish_migrations(con) -> None:
    """After migrations ran: the views of the current schema (views hold no data, so they are not
    migrated step by step but recreated over the tables the last migration left)."""
    create_views(con)


def create_current(con) -> None:
    """Empty tables and views of the current schema on a fresh connection (imports of exports use it)."""
    for migration in MIGRATIONS:
        migration(con)
    finish_migrations(con)

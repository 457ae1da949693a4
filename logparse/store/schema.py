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

from logparse.launches.args import IGNORED_ARGS, IGNORED_PORTS
from logparse.store.changes import HISTORY_METRICS

#: Metric columns of ``launch_summary`` that ``history`` compares launch to launch.  Memory
#: figures are the launch budget's (:mod:`logparse.budget.model`): the binding rank's.
_HISTORY_METRICS_V3 = (
    "kv_tokens",
    "max_total_num_tokens",
    "avail_before_load_gb",
    "weights_gb",
    "avail_after_load_gb",
    "kv_size_gb",
    "avail_after_pool_gb",
    "graph_gb",
    "avail_after_graph_gb",
    "headroom_gb",
    "min_headroom_gb",
    "available_mem_gb",
    "kv_bytes_per_token",
    "max_prefill_tokens",
    "max_running_requests_effective",
    "context_len",
    "mem_fraction_static",
    "load_s",
    "graph_s",
    "peak_running_req",
    "peak_token_usage",
    "peak_queue_req",
    "retractions",
)

_TABLES_V1 = """
CREATE TABLE schema_version (
    version INTEGER NOT NULL,
    applied_at TIMESTAMP NOT NULL,
    logparse_version VARCHAR
);
CREATE TABLE sources (
    source_id VARCHAR NOT NULL,
    path VARCHAR,              -- file path, '-' for stdin, or the journal query
    kind VARCHAR,              -- file | stdin | journal | text | import
    format VARCHAR,
    content_hash VARCHAR,      -- sha256 of the bytes read
    bytes BIGINT,
    lines BIGINT,
    parsed BIGINT,
    noise BIGINT,
    unrecognized BIGINT,
    ingested_at TIMESTAMP,
    host VARCHAR,
    labels JSON,
    n_launches INTEGER,
    warnings JSON,
    logparse_version VARCHAR
);
CREATE TABLE launches (
    launch_id VARCHAR NOT NULL,
    source VARCHAR,
    host VARCHAR,
    unit VARCHAR,
    pid BIGINT,
    boot VARCHAR,
    started_at TIMESTAMP,
    ready_at TIMESTAMP,
    outcome VARCHAR,
    error VARCHAR,
    sglang_version VARCHAR,
    sglang_version_range VARCHAR,
    version_evidence JSON,
    model_path VARCHAR,
    tp_size INTEGER,
    dp_size INTEGER,
    pp_size INTEGER,
    ep_size INTEGER,
    mem_fraction_static DOUBLE,
    kv_cache_dtype VARCHAR,
    page_size INTEGER,
    context_length BIGINT,
    chunked_prefill_size BIGINT,
    max_running_requests BIGINT,
    max_total_tokens BIGINT,
    speculative_algorithm VARCHAR,
    enable_hierarchical_cache BOOLEAN,
    hicache_ratio DOUBLE,
    hicache_size DOUBLE,
    enable_dp_attention BOOLEAN,
    device VARCHAR,
    server_args JSON,
    server_args_form VARCHAR,
    max_total_num_tokens BIGINT,
    max_prefill_tokens BIGINT,
    max_running_requests_effective BIGINT,
    context_len BIGINT,
    available_mem_gb DOUBLE,
    available_mem_kind VARCHAR,
    hicache_host_gb DOUBLE,
    hicache_host_tokens BIGINT,
    first_line BIGINT,
    last_line BIGINT,
    warnings JSON,
    -- beyond the parse JSON contract
    labels JSON,
    source_id VARCHAR,
    deployment VARCHAR,
    version_min VARCHAR,
    version_max VARCHAR,
    sglang_version_given VARCHAR,
    started_at_text VARCHAR,
    ready_at_text VARCHAR,
    startup_s DOUBLE,
    n_ranks INTEGER,
    n_events INTEGER,
    n_warnings INTEGER,
    ingested_at TIMESTAMP,
    updated_at TIMESTAMP
);
CREATE TABLE rank_memory (
    launch_id VARCHAR NOT NULL,
    rank_idx INTEGER NOT NULL,
    dp_rank INTEGER,
    pp_rank INTEGER,
    tp_rank INTEGER,
    ep_rank INTEGER,
    worker VARCHAR,
    avail_before_load_gb DOUBLE,
    weights_gb DOUBLE,
    avail_after_load_gb DOUBLE,
    load_s DOUBLE,
    kv_dtype VARCHAR,
    kv_tokens BIGINT,
    k_size_gb DOUBLE,
    v_size_gb DOUBLE,
    kv_size_gb DOUBLE,
    avail_after_pool_gb DOUBLE,
    graph_gb DOUBLE,
    avail_after_graph_gb DOUBLE,
    graph_s DOUBLE,
    -- derived
    headroom_gb DOUBLE,
    kv_bytes_per_token DOUBLE,
    extra JSON
);
CREATE TABLE events (
    launch_id VARCHAR NOT NULL,
    seq INTEGER NOT NULL,
    source_id VARCHAR,
    source VARCHAR,
    line_no BIGINT,
    ts TIMESTAMP,
    ts_text VARCHAR,
    dp_rank INTEGER,
    pp_rank INTEGER,
    tp_rank INTEGER,
    ep_rank INTEGER,
    attn_cp_rank INTEGER,
    moe_dp_rank INTEGER,
    worker VARCHAR,
    tagged BOOLEAN,
    kind VARCHAR,
    form VARCHAR,
    variant VARCHAR,
    fields JSON,
    text VARCHAR,
    line_hash VARCHAR,
    cursor VARCHAR
);
CREATE TABLE runtime_stats (
    launch_id VARCHAR NOT NULL,
    peak_running_req BIGINT,
    peak_token_usage DOUBLE,
    peak_queue_req BIGINT,
    peak_tokens BIGINT,
    retractions BIGINT,     -- "KV cache pool is full. Retract requests." and other retract lines
    batch_lines BIGINT,
    first_runtime_at TIMESTAMP,
    last_runtime_at TIMESTAMP,
    runtime JSON            -- Launch.runtime as parsed (startup timings, per-DP summary, ...)
);
CREATE TABLE unrecognized (
    source_id VARCHAR NOT NULL,
    line_no BIGINT,
    reason VARCHAR,
    text VARCHAR
);
CREATE TABLE journal_cursors (
    host VARCHAR,
    unit VARCHAR,
    cursor VARCHAR,
    updated_at TIMESTAMP,
    scope VARCHAR,          -- the journal query the cursor answers (unit, directory, file)
    realtime_us BIGINT
);
CREATE TABLE launch_sources (
    launch_id VARCHAR NOT NULL,
    source_id VARCHAR NOT NULL
);
"""

_TABLES_V2 = """
CREATE TABLE launch_args (
    launch_id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    value JSON
);
CREATE TABLE ignored_args (
    name VARCHAR NOT NULL,
    reason VARCHAR
);
"""


def _rank0_cte() -> str:
    return """
    rank0 AS (
        SELECT * EXCLUDE (rn) FROM (
            SELECT r.*, row_number() OVER (
                PARTITION BY r.launch_id
                ORDER BY coalesce(r.dp_rank, 0) = -1, abs(coalesce(r.dp_rank, 0)), coalesce(r.pp_rank, 0),
                         coalesce(r.tp_rank, 0), coalesce(r.ep_rank, 0), r.rank_idx) AS rn
            FROM rank_memory r WHERE r.worker = 'target') WHERE rn = 1
    ),
    rank_agg AS (
        SELECT launch_id, count(*) AS n_ranks_target, min(headroom_gb) AS min_headroom_gb,
               min(kv_tokens) AS min_kv_tokens, max(weights_gb) AS max_weights_gb
        FROM rank_memory WHERE worker = 'target' GROUP BY launch_id
    )"""


_VIEW_LAUNCH_SUMMARY_V3 = f"""
CREATE OR REPLACE VIEW launch_summary AS
WITH {_rank0_cte()}
SELECT
    l.launch_id, l.deployment, l.host, l.unit, l.pid, l.started_at, l.ready_at, l.startup_s, l.outcome, l.error,
    l.sglang_version, l.sglang_version_range, coalesce(l.sglang_version, l.sglang_version_range) AS version,
    l.model_path, l.tp_size, l.dp_size, l.pp_size, l.ep_size, l.device,
    l.mem_fraction_static, l.kv_cache_dtype, l.page_size, l.context_length, l.chunked_prefill_size,
    l.max_running_requests, l.max_total_tokens, l.speculative_algorithm, l.enable_hierarchical_cache,
    l.max_total_num_tokens, l.max_prefill_tokens, l.max_running_requests_effective, l.context_len,
    l.available_mem_gb, l.available_mem_kind, l.hicache_host_gb, l.hicache_host_tokens,
    r.avail_before_load_gb, r.weights_gb, r.avail_after_load_gb, r.load_s,
    -- before 0.4.1.post6 SGLang printed no KV pool line: the pool size is the summary's
    -- max_total_num_tokens (the pool's #tokens is that value in every release).
    r.kv_dtype, coalesce(r.kv_tokens, l.max_total_num_tokens) AS kv_tokens, r.k_size_gb, r.v_size_gb,
    r.kv_size_gb, r.avail_after_pool_gb,
    r.graph_gb, r.avail_after_graph_gb, r.graph_s, r.headroom_gb, r.kv_bytes_per_token,
    a.min_headroom_gb, a.min_kv_tokens, a.n_ranks_target AS n_ranks,
    s.peak_running_req, s.peak_token_usage, s.peak_queue_req, s.peak_tokens, s.retractions,
    s.batch_lines, s.first_runtime_at, s.last_runtime_at,
    l.n_warnings, l.n_events, l.labels, l.source_id, l.source, l.ingested_at, l.updated_at
FROM launches l
LEFT JOIN rank0 r USING (launch_id)
LEFT JOIN rank_agg a USING (launch_id)
LEFT JOIN runtime_stats s USING (launch_id)
"""


def _history_view_v3() -> str:
    metric_cols = ",\n    ".join(f"{m}, {m} - lag({m}) OVER w AS {m}_change" for m in _HISTORY_METRICS_V3)
    return f"""
CREATE OR REPLACE VIEW history AS
WITH ordered AS (
    SELECT s.*,
        row_number() OVER w AS launch_no,
        lag(launch_id) OVER w AS prev_launch_id,
        lag(version) OVER w AS prev_version,
        lag(started_at) OVER w AS prev_started_at,
        {metric_cols}
    FROM launch_summary s
    WINDOW w AS (PARTITION BY deployment ORDER BY started_at NULLS FIRST, ingested_at, launch_id)
),
has_args AS (SELECT DISTINCT launch_id FROM launch_args),
pairs AS (
    SELECT o.launch_id, o.prev_launch_id FROM ordered o
    WHERE o.prev_launch_id IS NOT NULL
      AND o.launch_id IN (SELECT launch_id FROM has_args)
      AND o.prev_launch_id IN (SELECT launch_id FROM has_args)
),
cur AS (
    SELECT p.launch_id, a.name, a.value::VARCHAR AS value FROM pairs p JOIN launch_args a ON a.launch_id = p.launch_id
),
prev AS (
    SELECT p.launch_id, a.name, a.value::VARCHAR AS value FROM pairs p JOIN launch_args a ON a.launch_id = p.prev_launch_id
),
diff AS (
    SELECT coalesce(cur.launch_id, prev.launch_id) AS launch_id, coalesce(cur.name, prev.name) AS name,
           prev.value AS old_value, cur.value AS new_value
    FROM cur FULL OUTER JOIN prev ON cur.launch_id = prev.launch_id AND cur.name = prev.name
    WHERE cur.value IS DISTINCT FROM prev.value
      AND coalesce(cur.name, prev.name) NOT IN (SELECT name FROM ignored_args)
),
arg_diff AS (
    SELECT launch_id,
           list(name ORDER BY name) AS changed_arg_names,
           string_agg(name, ', ' ORDER BY name) AS changed_args,
           string_agg(name || ': ' || coalesce(old_value, '(absent)') || ' -> ' || coalesce(new_value, '(absent)'),
                      '; ' ORDER BY name) AS arg_changes
    FROM diff GROUP BY launch_id
)
SELECT o.*,
    CASE WHEN o.prev_launch_id IS NULL THEN NULL
         ELSE o.version IS DISTINCT FROM o.prev_version END AS version_changed,
    CASE WHEN o.prev_launch_id IS NOT NULL AND o.version IS DISTINCT FROM o.prev_version
         THEN coalesce(o.prev_version, '?') || ' -> ' || coalesce(o.version, '?') END AS version_change,
    CASE WHEN o.launch_id IN (SELECT launch_id FROM pairs) THEN d.launch_id IS NOT NULL END AS args_changed,
    d.changed_args, d.changed_arg_names, d.arg_changes
FROM ordered o LEFT JOIN arg_diff d USING (launch_id)
"""


VIEW_LAUNCH_SUMMARY = """
CREATE OR REPLACE VIEW launch_summary AS
WITH binding AS (
    -- the binding rank's target row as printed (its free memory after the pool and the graphs)
    SELECT rb.launch_id, r.avail_after_pool_gb, r.avail_after_graph_gb, r.kv_dtype, r.k_size_gb, r.v_size_gb
    FROM launch_budget b
    JOIN rank_budget rb ON rb.launch_id = b.launch_id AND rb.rank = b.binding_rank
    JOIN rank_memory r ON r.launch_id = rb.launch_id AND r.worker = 'target'
         AND r.dp_rank IS NOT DISTINCT FROM rb.dp_rank AND r.pp_rank IS NOT DISTINCT FROM rb.pp_rank
         AND r.tp_rank IS NOT DISTINCT FROM rb.tp_rank AND r.ep_rank IS NOT DISTINCT FROM rb.ep_rank
),
rank_agg AS (
    SELECT launch_id, min(kv_tokens) AS min_kv_tokens FROM rank_memory WHERE worker = 'target' GROUP BY launch_id
)
SELECT
    l.launch_id, l.engine, l.deployment, l.host, l.unit, l.pid, l.started_at, l.ready_at, b.startup_s, l.outcome,
    l.error, l.error_kind, l.sglang_version, l.sglang_version_range,
    coalesce(l.engine_version, l.engine_version_range, l.sglang_version, l.sglang_version_range) AS version,
    l.engine_version, l.engine_version_range, l.engine_generation, l.time_zone,
    -- vLLM's figures (None on SGLang launches); kv_tokens' meaning is kv_tokens_definition's
    l.gpu_memory_utilization, l.gpu_memory_utilization_source, l.max_model_len, l.num_gpu_blocks, l.block_size,
    l.kv_tokens_definition, l.max_concurrency, l.max_concurrency_tokens,
    l.model_path, l.tp_size, l.dp_size, l.pp_size, l.ep_size, l.device,
    l.mem_fraction_static, l.kv_cache_dtype, l.page_size, l.context_length, l.chunked_prefill_size,
    l.max_running_requests, l.max_total_tokens, l.speculative_algorithm, l.enable_hierarchical_cache,
    l.max_total_num_tokens, l.max_prefill_tokens, l.max_running_requests_effective, l.context_len,
    l.available_mem_gb, l.available_mem_kind, l.hicache_host_gb, l.hicache_host_tokens,
    -- the launch budget (logparse.budget.model): the binding rank's figures
    b.binding_rank, b.free_before_weights_gb AS avail_before_load_gb, b.weights_gb,
    b.free_after_weights_gb AS avail_after_load_gb, b.load_s,
    g.kv_dtype, b.kv_tokens, b.kv_tokens_source, g.k_size_gb, g.v_size_gb, b.kv_pool_gb, b.kv_pool_gb AS kv_size_gb,
    b.other_pools_gb, g.avail_after_pool_gb, b.graph_gb, g.avail_after_graph_gb, b.graph_s,
    b.draft_weights_gb, b.draft_kv_gb, b.draft_graph_gb, b.other_gb,
    b.headroom_gb, b.headroom_gb AS min_headroom_gb, b.lowest_free_gb, b.unknown ->> 'headroom_gb' AS headroom_unknown,
    b.bytes_per_token AS kv_bytes_per_token, b.predicted_kv_tokens, b.era, b.memory_kind,
    a.min_kv_tokens, l.n_ranks,
    s.peak_running_req, s.peak_token_usage, s.peak_queue_req, s.peak_tokens, s.retractions,
    s.batch_lines, s.first_runtime_at, s.last_runtime_at,
    l.n_warnings, l.n_events, l.labels, l.source_id, l.source, l.ingested_at, l.updated_at
FROM launches l
LEFT JOIN launch_budget b USING (launch_id)
LEFT JOIN binding g USING (launch_id)
LEFT JOIN rank_agg a USING (launch_id)
LEFT JOIN runtime_stats s USING (launch_id)
"""


#: The ``history`` view: each launch's summary, its place in its deployment (``launch_sequence``) and
#: its change against the previous launch, persisted in ``launch_change`` when the launches change
#: (:mod:`logparse.store.changes`), so reading it computes no window and no argument diff.
#: ``{metric_cols}`` is filled from :data:`HISTORY_METRICS` (the columns keep their order).
_HISTORY_SQL = """
CREATE OR REPLACE VIEW history AS
SELECT s.* EXCLUDE ({metrics}),
    q.launch_no, q.prev_launch_id, c.prev_version, c.prev_started_at, c.prev_kv_tokens_definition,
    {metric_cols},
    c.version_changed, c.version_change, c.kv_tokens_definition_change, c.args_changed, c.changed_args,
    c.changed_arg_names, c.arg_changes, c.defaults_moved, c.derived_changes, c.fields_added, c.fields_removed,
    c.release_fields_change
FROM launch_summary s
JOIN launch_sequence q USING (launch_id)
LEFT JOIN launch_change c USING (launch_id)
WHERE q.same_start_as IS NULL
"""


def _history_view() -> str:
    metric_cols = ",\n    ".join(f"s.{m}, c.{m}_change" for m in HISTORY_METRICS)
    return _HISTORY_SQL.format(metrics=", ".join(HISTORY_METRICS), metric_cols=metric_cols)


def create_views(con) -> None:
    con.execute(VIEW_LAUNCH_SUMMARY)
    con.execute(_history_view())


def _views_v3(con) -> None:
    """The views as migrations 2 and 3 left them (kept so that those migrations stay what they were)."""
    con.execute(_VIEW_LAUNCH_SUMMARY_V3)
    con.execute(_history_view_v3())


# ---------------------------------------------------------------------------- migrations


def _m1_tables(con) -> None:
    for stmt in _TABLES_V1.split(";"):
        if stmt.strip():
            con.execute(stmt)


def _m2_args_and_views(con) -> None:
    """Per-argument table (backfilled from ``launches.server_args``), the noise list, the views."""
    for stmt in _TABLES_V2.split(";"):
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

        frame = args_frame([(lid, json.loads(sa), None) for lid, sa in rows])
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


#: ``launch_change``'s metric columns as migration 9 created them (frozen: a later metric is a later
#: migration's column).
_CHANGE_METRICS_V9 = (
    ("kv_tokens", "BIGINT"),
    ("max_total_num_tokens", "BIGINT"),
    ("predicted_kv_tokens", "BIGINT"),
    ("avail_before_load_gb", "DOUBLE"),
    ("weights_gb", "DOUBLE"),
    ("avail_after_load_gb", "DOUBLE"),
    ("kv_size_gb", "DOUBLE"),
    ("kv_pool_gb", "DOUBLE"),
    ("avail_after_pool_gb", "DOUBLE"),
    ("graph_gb", "DOUBLE"),
    ("avail_after_graph_gb", "DOUBLE"),
    ("headroom_gb", "DOUBLE"),
    ("min_headroom_gb", "DOUBLE"),
    ("lowest_free_gb", "DOUBLE"),
    ("available_mem_gb", "DOUBLE"),
    ("kv_bytes_per_token", "DOUBLE"),
    ("max_prefill_tokens", "BIGINT"),
    ("max_running_requests_effective", "BIGINT"),
    ("context_len", "BIGINT"),
    ("mem_fraction_static", "DOUBLE"),
    ("load_s", "DOUBLE"),
    ("graph_s", "DOUBLE"),
    ("startup_s", "DOUBLE"),
    ("peak_running_req", "BIGINT"),
    ("peak_token_usage", "DOUBLE"),
    ("peak_queue_req", "BIGINT"),
    ("retractions", "BIGINT"),
)


def _m9_launch_change(con) -> None:
    """``launch_change``: each launch's change against the previous launch of its deployment (the
    metrics' changes, the SGLang version and argument changes), which the ``history`` view computed
    with a window and an argument diff on every read.  Filled, like every derived table, after the
    migrations ran (:func:`logparse.store.db.migrate`), and refreshed with ``launch_sequence``.
    And an index of ``events`` by launch: a report reads one launch's events, which without it
    decompressed the whole table (most of ``show``'s own time on a large store)."""
    con.execute("CREATE INDEX events_launch_id ON events (launch_id)")
    metrics = "".join(f"    {m}_change {kind},\n" for m, kind in _CHANGE_METRICS_V9)
    con.execute(
        "CREATE TABLE launch_change (\n    launch_id VARCHAR NOT NULL PRIMARY KEY,\n    deployment VARCHAR,\n"
        "    prev_version VARCHAR,\n    prev_started_at TIMESTAMP,\n    prev_kv_tokens_definition VARCHAR,\n"
        + metrics
        + "    version_changed BOOLEAN,\n    version_change VARCHAR,\n    kv_tokens_definition_change VARCHAR,\n"
        "    args_changed BOOLEAN,\n"
        "    changed_args VARCHAR,\n    changed_arg_names VARCHAR[],\n    arg_changes VARCHAR,\n"
        "    defaults_moved VARCHAR,\n    derived_changes VARCHAR,\n    fields_added BIGINT,\n"
        "    fields_removed BIGINT,\n    release_fields_change VARCHAR\n)"
    )


#: ``pending_pieces`` as migration 10 created it (see :mod:`logparse.store.pending`).
PENDING_PIECES_SQL = """
CREATE TABLE pending_pieces (
    piece_id VARCHAR NOT NULL PRIMARY KEY,
    host VARCHAR,
    unit VARCHAR,
    boot VARCHAR,
    pid BIGINT,
    first_ts VARCHAR,
    n_lines BIGINT,
    line_hashes VARCHAR[],
    events JSON,
    span JSON,
    ranges JSON,
    updated_at TIMESTAMP
)
"""


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
    con.execute(PENDING_PIECES_SQL)
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
    updates = []
    for table, column in text_columns:
        where = hint.replace("c)", f'"{column}"::VARCHAR)')
        if con.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchall()[0][0]:
            updates.append(f'UPDATE {table} SET "{column}" = logparse_redact("{column}"::VARCHAR) WHERE {where}')
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

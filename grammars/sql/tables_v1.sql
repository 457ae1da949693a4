
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


CREATE OR REPLACE VIEW launch_summary AS
WITH 
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
    )
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
